//! `dwp init`: materializes a markdown-only plan, the shared [`crate::steps::materialize`] with
//! the plan named by its folder. It derives a v5 `manifest.json` and `state.json` from the
//! markdown (the README's title, `**Standard:**` line, Plan Variables, Approval row and task
//! index), refusing a plan that already has either file, or that declares a standard newer than
//! this dwp knows; `dwp new` shares the same step. With `--contract`, it makes a record plan
//! (DWP v6/v7) of a contract draft instead ([`crate::steps::record_materialize`]).

pub use crate::steps::materialize::{Creator, InitOutcome, init};
pub use crate::steps::record_materialize::{
    RecordInitReport, RecordInitRequest, materialize_record,
};
