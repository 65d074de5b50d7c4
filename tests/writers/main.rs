//! The commands that write a plan, through the real binary: one module per command (`amend`,
//! `approve`, `finalize`, `lock`, `init`/`migrate`, `new`, `reconcile`, `run`, `update` and its
//! `--tick`) and `--dry-run` across the multi-file writers, and every writer on a published plan;
//! a record plan's lock, the public ledger's own (`ledger_lock`), its reconciliation
//! (`record_reconcile`), its tasks' starts and completions (`record_update`), its observed
//! gates (`record_run`), its invariants' evaluations (`record_invariant`), its approval (`record_approve`), its making (`record_init`) and its
//! contract's amendment (`record_amend`).

#[path = "../common/mod.rs"]
mod common;

mod amend;
mod approve;
mod dry_run;
mod finalize;
mod ledger_lock;
mod lock;
mod materialize;
mod new;
mod observed;
mod published;
mod reconcile;
mod record_amend;
mod record_approve;
mod record_e2e;
mod record_init;
mod record_invariant;
mod record_new;
mod record_plans;
mod record_reconcile;
mod record_run;
mod record_update;
mod run;
mod tick;
mod update;
