//! What an agent's harness and CI call: `dwp loop`, `dwp contract` and the documented CI
//! integrations.

#[path = "../common/mod.rs"]
mod common;

mod action;
mod ci_integration;
mod contract;
mod loop_cmd;
