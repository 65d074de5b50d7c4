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

#[path = "commands/amend.rs"]
pub mod amend;
pub mod cli;
pub mod clock;
#[path = "rules/conformance/mod.rs"]
pub mod conformance;
#[path = "commands/contract/mod.rs"]
pub mod contract;
#[path = "rules/desync.rs"]
pub mod desync;
pub mod diff;
pub mod error;
#[path = "rules/evidence.rs"]
pub mod evidence;
#[path = "commands/finalize.rs"]
pub mod finalize;
pub mod findings;
#[path = "store/git.rs"]
pub mod git;
#[path = "rules/invariants.rs"]
pub mod invariants;
#[path = "plan/json.rs"]
pub mod json;
#[path = "commands/loop/mod.rs"]
pub mod r#loop;
#[path = "plan/markdown/mod.rs"]
pub mod markdown;
#[path = "commands/materialize.rs"]
pub mod materialize;
#[path = "plan/model.rs"]
pub mod model;
#[path = "plan/mod.rs"]
pub mod plan;
#[path = "steps/publication.rs"]
pub mod publication;
#[path = "rules/receipt.rs"]
pub mod receipt;
#[path = "commands/reconcile.rs"]
pub mod reconcile;
#[path = "plan/records.rs"]
pub mod records;
#[path = "commands/recover.rs"]
pub mod recover;
#[path = "rules/regenerate.rs"]
pub mod regenerate;
#[path = "plan/schema.rs"]
pub mod schema;
#[path = "commands/status.rs"]
pub mod status;
pub mod store;
pub mod synth;
pub mod term;
#[path = "commands/update.rs"]
pub mod update;
#[path = "steps/updater.rs"]
pub mod updater;
#[path = "commands/validate.rs"]
pub mod validate;
#[path = "commands/verify.rs"]
pub mod verify;
#[path = "steps/writer.rs"]
pub mod writer;

pub use error::{Error, Exit, Result};
