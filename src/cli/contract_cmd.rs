//! `dwp contract ...`: arguments and rendering only; the logic is in [`crate::contract`].

use crate::error::{Error, Exit};
use clap::Subcommand;
use std::io::Write;

#[derive(Debug, Subcommand)]
pub enum ContractCommand {}

impl ContractCommand {
    pub fn name(&self) -> &'static str {
        match *self {}
    }
}

pub fn run(command: &ContractCommand, _out: &mut dyn Write, _json: bool) -> Result<Exit, Error> {
    match *command {}
}
