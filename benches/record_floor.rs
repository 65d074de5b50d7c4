//! The least a verify of a record plan could cost: read every file of the plan and parse each
//! JSON record once with serde_json, checking nothing. `harness = false`: a plain `main`, run as
//! a process by `benches/paired.py` beside `dwp verify` (docs/PERFORMANCE.md).
//!
//! Run: `cargo bench --bench record_floor --no-run`, then time the printed executable with
//! `PLAN_DIR scan` (each record parsed and thrown away) or `PLAN_DIR tree` (each record kept as a
//! `serde_json::Value`, as a generic reader holds it). The journal is read and parsed on one
//! core, every other file on the other; nothing is freed, as the process ends.

use std::fs;
use std::path::{Path, PathBuf};

fn files_under(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("a readable plan folder") {
        let entry = entry.expect("a readable entry");
        let path = entry.path();
        if entry.file_type().expect("a file type").is_dir() {
            files_under(&path, found);
        } else {
            found.push(path);
        }
    }
}

/// Parse one JSON record; 1 when it parses.
fn parse(bytes: &[u8], keep_tree: bool) -> usize {
    if keep_tree {
        let tree = serde_json::from_slice::<serde_json::Value>(bytes);
        let parsed = tree.is_ok() as usize;
        std::mem::forget(tree);
        parsed
    } else {
        serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok() as usize
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(dir), Some(mode)) = (args.first(), args.get(1)) else {
        eprintln!("usage: record_floor PLAN_DIR scan|tree");
        std::process::exit(2);
    };
    let dir = Path::new(dir);
    let keep_tree = mode == "tree";
    let journal = dir.join("journal.ndjson");
    let mut others = Vec::new();
    files_under(dir, &mut others);
    others.retain(|path| path != &journal);
    let (events, documents) = rayon::join(
        || {
            let bytes = fs::read(&journal).unwrap_or_default();
            let lines = bytes.split(|b| *b == b'\n').filter(|line| !line.is_empty());
            let parsed = lines.map(|line| parse(line, keep_tree)).sum::<usize>();
            std::mem::forget(bytes);
            parsed
        },
        || {
            let mut parsed = 0;
            for path in &others {
                let bytes = fs::read(path).unwrap_or_default();
                if path.extension().is_some_and(|e| e == "json") {
                    parsed += parse(&bytes, keep_tree);
                }
                std::mem::forget(bytes);
            }
            parsed
        },
    );
    println!("{events} events and {documents} documents parsed");
}
