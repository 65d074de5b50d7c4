//! `dwp init`: materializes a markdown-only plan, the shared [`crate::steps::materialize`] with
//! the plan named by its folder. It derives a v5 `manifest.json` and `state.json` from the
//! markdown (the README's title, `**Standard:**` line, Plan Variables, Approval row and task
//! index), refusing a plan that already has either file, or that declares a standard newer than
//! this dwp knows; `dwp new` shares the same step.

pub use crate::steps::materialize::{Creator, InitOutcome, init};
