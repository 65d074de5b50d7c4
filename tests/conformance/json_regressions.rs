//! The strict JSON reader, the hook payload reader and the record-plan journal reader never
//! panic: every seed of their fuzz corpora (`fuzz/seeds/json/`, `fuzz/seeds/hook_payload/`,
//! `fuzz/seeds/journal/`, where a crash the fuzzer finds is kept) is replayed on stable, in
//! `cargo test`, through the same calls the fuzz targets make (`fuzz/fuzz_targets/*.rs`), so
//! what `.ci/fuzz` has been fed stays tested without it.

use crate::common::{files_under, fuzz_dir};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

/// What `fuzz/fuzz_targets/json.rs` does with its input.
fn read_json(data: &[u8]) {
    use dwp::plan::model::{DocKind, Manifest};
    if let Ok(state) = dwp::plan::state_from_bytes(Path::new("state.json"), data.to_vec()) {
        let _ = dwp::rules::invariants::check_state(&state);
    }
    if let Ok(value) = dwp::plan::json::parse_strict(data) {
        let path = Path::new("manifest.json");
        let manifest =
            dwp::plan::from_value::<Manifest>(path, data.to_vec(), value, DocKind::Manifest);
        if let Ok(manifest) = manifest {
            let _ = dwp::rules::invariants::check_manifest(&manifest);
        }
    }
}

/// What `fuzz/fuzz_targets/hook_payload.rs` does with its input.
fn read_payload(data: &[u8]) {
    let _ = dwp::commands::contract::payload::parse_post_tool_use(data);
    let _ = dwp::commands::contract::payload::parse_stop(data);
}

/// What `fuzz/fuzz_targets/journal.rs` does with its input.
fn read_journal(data: &[u8]) {
    let contract = std::fs::read_to_string(crate::common::repo_root().join(
        "conformance-fixtures/record-valid-v7-dag-parallel/PLAN_021_docs_site_migration/contract.json",
    ))
    .expect("the fixture contract");
    dwp::rules::record::read_untrusted(data, &contract);
}

/// Replay every file of `fuzz/seeds/<target>/` through `read`; panics listing every input that
/// made it panic. Returns how many seeds there were.
fn replay(target: &str, read: fn(&[u8])) -> usize {
    let seeds = files_under(&fuzz_dir().join("seeds").join(target));
    let failures: Vec<String> = seeds
        .iter()
        .filter_map(|path| {
            let bytes = std::fs::read(path).expect("read corpus file");
            catch_unwind(AssertUnwindSafe(|| read(&bytes)))
                .err()
                .map(|_| path.display().to_string())
        })
        .collect();
    assert!(failures.is_empty(), "panicked on:\n{}", failures.join("\n"));
    seeds.len()
}

#[test]
fn every_json_seed_and_kept_regression_reads_without_panicking() {
    let seeds = replay("json", read_json);
    assert!(seeds >= 5, "only {seeds} seeds under fuzz/seeds/json");
}

#[test]
fn every_hook_payload_seed_and_kept_regression_reads_without_panicking() {
    let seeds = replay("hook_payload", read_payload);
    assert!(
        seeds >= 5,
        "only {seeds} seeds under fuzz/seeds/hook_payload"
    );
}

#[test]
fn the_json_seeds_reach_the_typed_state_and_manifest() {
    // Seeds that stop at the parser would leave the schema, typing and invariants unfuzzed.
    let dir = fuzz_dir().join("seeds").join("json");
    let state = std::fs::read(dir.join("state_v5_two_tasks.json")).expect("seed");
    let loaded = dwp::plan::state_from_bytes(Path::new("state.json"), state);
    assert!(loaded.is_ok(), "{:?}", loaded.err());
    let manifest = std::fs::read(dir.join("manifest_v5.json")).expect("seed");
    let value = dwp::plan::json::parse_strict(&manifest).expect("strict JSON");
    let typed = dwp::plan::from_value::<dwp::plan::model::Manifest>(
        Path::new("manifest.json"),
        manifest,
        value,
        dwp::plan::model::DocKind::Manifest,
    );
    assert!(typed.is_ok(), "{:?}", typed.err());
}

#[test]
fn the_hook_payload_seeds_reach_a_recorded_write_and_a_stop() {
    let dir = fuzz_dir().join("seeds").join("hook_payload");
    let write = std::fs::read(dir.join("post_tool_use_write.json")).expect("seed");
    assert!(matches!(
        dwp::commands::contract::payload::parse_post_tool_use(&write),
        Ok(dwp::commands::contract::payload::PostToolUse::Write(_))
    ));
    let stop = std::fs::read(dir.join("stop.json")).expect("seed");
    assert!(dwp::commands::contract::payload::parse_stop(&stop).is_ok());
}

#[test]
fn every_journal_seed_and_kept_regression_reads_without_panicking() {
    let seeds = replay("journal", read_journal);
    assert!(seeds >= 5, "only {seeds} seeds under fuzz/seeds/journal");
}
