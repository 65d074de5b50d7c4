//! dwp keeps the machine-readable state of a Deep Work Plan honest.
//!
//! A plan is a folder of markdown (the human source of truth) plus `manifest.json` (identity,
//! written once) and `state.json` (live per-task state). This crate reads, judges and changes
//! that state so that no agent can claim work without evidence, tear a file, lose a concurrent
//! update, or let the JSON drift from the markdown.
//!
//! Data flows one way: [`store`] reads bytes (bounded, no escaping symlinks), [`json`] parses
//! them strictly, [`schema`] checks them against the embedded schemas, [`model`] types them,
//! [`invariants`] checks what the schema cannot, and commands such as [`validate`] turn the
//! result into [`findings`]. Writers go back through [`store`]: canonical bytes, the lock, the
//! durable atomic replace. [`cli`] only parses arguments and renders results.

pub mod amend;
pub mod cli;
pub mod clock;
pub mod conformance;
pub mod contract;
pub mod desync;
pub mod diff;
pub mod error;
pub mod evidence;
pub mod finalize;
pub mod findings;
pub mod git;
pub mod invariants;
pub mod json;
pub mod r#loop;
pub mod markdown;
pub mod materialize;
pub mod model;
pub mod plan;
pub mod publication;
pub mod receipt;
pub mod reconcile;
pub mod records;
pub mod recover;
pub mod regenerate;
pub mod schema;
pub mod status;
pub mod store;
pub mod synth;
pub mod term;
pub mod update;
pub mod updater;
pub mod validate;
pub mod verify;
pub mod writer;

pub use error::{Error, Exit, Result};
