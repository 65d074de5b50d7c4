//! dwp keeps the machine-readable state of a Deep Work Plan honest.
//!
//! A plan is a folder of markdown (the human source of truth) plus `manifest.json` (identity,
//! written once) and `state.json` (live per-task state). This crate reads, judges and changes
//! that state so that no agent can claim work without evidence, tear a file, lose a concurrent
//! update, or let the JSON drift from the markdown.
//!
//! The modules form layers, each importing only the ones below it (`tests/safety/layers.rs` holds the
//! code to it; `docs/ARCHITECTURE.md` describes each module):
//!
//! - [`cli`]: parses arguments, calls one command, renders its outcome;
//! - [`commands`]: one module per subcommand; commands never import each other;
//! - [`steps`]: what several commands share (the guarded update, publication, the writer's
//!   lock and safety net, and `commit`, the one writer of plan folders);
//! - [`rules`]: judgements over a loaded plan; they never read or write a file themselves;
//! - [`plan`]: the model, strict JSON, the schemas, the markdown reader, the loaded plan
//!   (`plan::LoadedPlan`, each file read at most once per command);
//! - [`store`]: bytes on disk (the only module that opens plan files), the lock, intent records,
//!   git;
//! - the base: [`error`], [`clock`], [`findings`], [`term`], [`diff`], [`profile`], [`dispose`].
//!
//! `synth` generates synthetic plans for the tests and benchmarks; it is built only for them
//! (the `synth` feature, which the crate's own dev-dependency on itself turns on), never into
//! the binary.

pub mod cli;
pub mod clock;
pub mod commands;
pub mod diff;
pub mod dispose;
pub mod error;
pub mod findings;
pub mod plan;
pub mod profile;
pub mod rules;
pub mod steps;
pub mod store;
#[cfg(any(test, feature = "synth"))]
pub mod synth;
pub mod term;

pub use error::{Error, Exit, Result};

/// Unit tests that start a child process hold this: a command that overstays makes dwp kill and
/// reap every child it has (`steps::process`), which would take another test's child from under
/// it.
#[cfg(test)]
pub(crate) fn one_child_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static ONE_CHILD_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE_CHILD_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
