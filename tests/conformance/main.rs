//! What dwp reads and how it judges it: the conformance fixtures (`fixtures`), the shapes of plan
//! markdown, the fuzz corpora replayed on stable, and the embedded schemas against the public
//! reference's.

#[path = "../common/mod.rs"]
mod common;

mod fixtures;
mod full_records;
mod index_files;
mod json_regressions;
mod markdown_regressions;
mod markdown_shapes;
mod plan_shapes;
mod progress_counts;
mod python_bytes;
mod schema_parity;
