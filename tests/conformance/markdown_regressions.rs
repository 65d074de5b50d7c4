//! The markdown reader never panics: every seed of the fuzz corpora (`fuzz/seeds/<target>/`) is
//! replayed through both `parse_readme` and `parse_task_file` on stable, in `cargo test`, so what
//! the fuzzer (`.ci/fuzz`, cargo-fuzz) has been fed stays tested without it. Inputs are bytes,
//! read as lossy UTF-8, exactly as the fuzz targets read them.
//!
//! A crash the fuzzer finds is kept, minimized, as a seed of its target (`.ci/fuzz` says how),
//! and gets its own named test below.

use crate::common::{files_under, fuzz_dir};
use dwp::plan::markdown::{parse_readme, parse_task_file};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

/// Feed `bytes` to both parsers the way the fuzz targets do; `Err` names the parser that
/// panicked and its message.
fn parse_both(bytes: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(bytes);
    for (name, parse) in [
        (
            "parse_readme",
            &(|t: &str| {
                let readme = parse_readme(t);
                let _ = readme.approval();
                let _ = readme.variable("Plan Format");
            }) as &dyn Fn(&str),
        ),
        (
            "parse_task_file",
            &(|t: &str| {
                if let Some(record) = parse_task_file(t) {
                    let _ = record.section("Goal");
                    for amendment in &record.amendments {
                        let _ = amendment.field("Authority");
                    }
                }
            }) as &dyn Fn(&str),
        ),
    ] {
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| parse(&text))) {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "(no message)".to_owned());
            return Err(format!("{name} panicked: {message}"));
        }
    }
    Ok(())
}

/// Replay every file under `dir`; panics listing every input that made a parser panic.
fn replay(dir: &Path) -> usize {
    let files = files_under(dir);
    let failures: Vec<String> = files
        .iter()
        .filter_map(|path| {
            let bytes = std::fs::read(path).expect("read corpus file");
            parse_both(&bytes)
                .err()
                .map(|e| format!("{}: {e}", path.display()))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    files.len()
}

#[test]
fn every_seed_of_the_fuzz_corpora_parses_without_panicking() {
    let seeds = fuzz_dir().join("seeds");
    let readme = replay(&seeds.join("readme"));
    let task_file = replay(&seeds.join("task_file"));
    assert!(readme >= 5, "only {readme} README seeds under {seeds:?}");
    assert!(
        task_file >= 5,
        "only {task_file} task-file seeds under {seeds:?}"
    );
    // Any other seed folder (a future target) is replayed too.
    replay(&seeds);
}

#[test]
fn every_fixture_markdown_file_parses_without_panicking() {
    let fixtures = crate::common::repo_root().join("conformance-fixtures");
    let markdown: Vec<PathBuf> = files_under(&fixtures)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    for path in &markdown {
        let bytes = std::fs::read(path).expect("read fixture");
        if let Err(e) = parse_both(&bytes) {
            panic!("{}: {e}", path.display());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// A bounded pseudo-random fuzz on stable: mutations of the seeds, fixed seed, every run the same.
// A cheap floor under the never-panic property where cargo-fuzz is not run; `.ci/fuzz` is the
// real fuzzer.
// ---------------------------------------------------------------------------------------------

/// Markdown tokens the reader's structure hangs on, inserted at random places.
const TOKENS: &[&str] = &[
    "- [",
    "- [ ] ",
    "- [x] ",
    "[X]",
    "[~]",
    "]",
    "[",
    "Task ",
    "Task 1: ",
    "Task 18446744073709551616",
    "# ",
    "## ",
    "### ",
    "{#",
    "{#task-1}",
    "}",
    "|",
    "|---|---|\n",
    "```",
    "~~~",
    "    ",
    "\r\n",
    "\n",
    "\r",
    "\t",
    "**",
    "Plan Status: ",
    "Standard: ",
    "(re-validate: ",
    "## Tasks\n",
    "## Goal\n",
    "## Completion & Log\n",
    "Status: ",
    "Amendment ",
    " — ",
    "–",
    "é",
    "\u{feff}",
    "> ",
    "<!--",
    "](#task-1)",
    "(",
    ":",
];

/// How many mutated inputs one `cargo test` run parses (about two seconds in a debug build).
const MUTATION_ROUNDS: usize = 5_000;

fn mutate(rng: &mut fastrand::Rng, seed: &[u8]) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for _ in 0..rng.usize(1..=8) {
        let at = rng.usize(0..=bytes.len());
        match rng.u8(0..6) {
            0 if !bytes.is_empty() => {
                let i = rng.usize(0..bytes.len());
                bytes[i] = rng.u8(..);
            }
            1 if !bytes.is_empty() => {
                let end = (at + rng.usize(1..=16)).min(bytes.len());
                bytes.drain(at.min(end)..end);
            }
            2 => {
                let token = TOKENS[rng.usize(0..TOKENS.len())];
                bytes.splice(at..at, token.bytes());
            }
            3 if !bytes.is_empty() => {
                // Duplicate a slice elsewhere (repeats lists, headings, fences).
                let start = rng.usize(0..bytes.len());
                let end = (start + rng.usize(1..=64)).min(bytes.len());
                let slice = bytes[start..end].to_vec();
                bytes.splice(at..at, slice);
            }
            4 => bytes.insert(at, rng.u8(..)),
            _ => {
                let token = TOKENS[rng.usize(0..TOKENS.len())];
                bytes.splice(at..at, token.bytes());
            }
        }
    }
    bytes
}

#[test]
fn mutated_seeds_never_panic() {
    let seeds: Vec<Vec<u8>> = files_under(&fuzz_dir().join("seeds"))
        .iter()
        .map(|p| std::fs::read(p).expect("read seed"))
        .collect();
    assert!(!seeds.is_empty(), "no seeds under fuzz/seeds");
    let mut rng = fastrand::Rng::with_seed(0x5eed_d3b9);
    for round in 0..MUTATION_ROUNDS {
        let seed = &seeds[rng.usize(0..seeds.len())];
        let input = mutate(&mut rng, seed);
        if let Err(e) = parse_both(&input) {
            panic!(
                "round {round}: {e}\ninput ({} bytes): {:?}",
                input.len(),
                String::from_utf8_lossy(&input)
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Minimized crashes found by the fuzzer, one test each. None so far: the first runs (readme
// 275 s / 430k inputs, task_file 215 s / 709k inputs, ASan and debug assertions) found nothing.
// ---------------------------------------------------------------------------------------------
