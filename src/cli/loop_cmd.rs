//! `dwp loop ...`: arguments and rendering only; the logic is in [`crate::r#loop`].

use crate::error::{Error, Exit};
use clap::Subcommand;
use std::io::Write;

#[derive(Debug, Subcommand)]
pub enum LoopCommand {}

impl LoopCommand {
    pub fn name(&self) -> &'static str {
        match *self {}
    }
}

pub fn run(command: &LoopCommand, _out: &mut dyn Write, _json: bool) -> Result<Exit, Error> {
    match *command {}
}
