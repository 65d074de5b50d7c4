//! The commands that read a plan and write nothing, through the real binary: `validate`,
//! `verify` (and its three outputs), `status`, `next`, and how a PLAN or ROOT left out is found.

#[path = "../common/mod.rs"]
mod common;

mod discovery;
mod next;
mod record_plans;
mod status;
mod validate;
mod verify;
mod verify_output;
