//! The command line: argument parsing (clap derive) and rendering. Every command's logic lives
//! in its library module; this layer turns arguments into calls and results into text or JSON,
//! and errors into `dwp <command>: <what> (<where>)` plus a hint, with the exit code from
//! [`crate::error::Error::exit`].

mod render;

use crate::error::{Error, Exit};
use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

const EXIT_CODES: &str = "\
Exit codes:
  0  success: valid, conformant, written
  1  rejected or findings: nothing was written
  2  usage error
  3  contention: the lock is held or the snapshot moved; re-read and retry
  4  I/O failure (disk full, fsync failed): nothing claimed
  5  UNVERIFIED: a check could not be made, so no claim either way";

#[derive(Debug, Parser)]
#[command(
    name = "dwp",
    version,
    about = "Keeps the machine-readable state of a Deep Work Plan honest.",
    long_about = "Keeps the machine-readable state of a Deep Work Plan honest: every agent, hook \
                  and CI job calls dwp to change or judge manifest.json and state.json.",
    after_help = EXIT_CODES,
    max_term_width = 100
)]
pub struct Cli {
    /// Print one JSON document on stdout instead of text.
    #[arg(long, global = true)]
    pub json: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check manifest.json and state.json against their schema and the state invariants.
    #[command(after_help = EXIT_CODES)]
    Validate {
        /// Plan folders, or single manifest.json / state.json files.
        #[arg(required = true, value_name = "PLAN")]
        targets: Vec<PathBuf>,
    },
}

impl Command {
    fn name(&self) -> &'static str {
        match self {
            Command::Validate { .. } => "validate",
        }
    }
}

/// Run the command line and return the process exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let name = cli.command.name();
    let result = run(&cli);
    let exit = match result {
        Ok(exit) => exit,
        Err(error) => {
            report_error(name, &error);
            error.exit()
        }
    };
    ExitCode::from(exit.code())
}

fn run(cli: &Cli) -> Result<Exit, Error> {
    let mut out = std::io::stdout().lock();
    let exit = match &cli.command {
        Command::Validate { targets } => {
            let results: Vec<_> = targets.iter().map(|t| crate::validate::validate(t)).collect();
            render::validate(&mut out, &results, cli.json)
        }
    };
    out.flush().map_err(|e| Error::io("write", std::path::Path::new("<stdout>"), e))?;
    Ok(exit)
}

fn report_error(command: &str, error: &Error) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "dwp {command}: {error}");
    if let Some(hint) = error.hint() {
        let _ = writeln!(err, "  hint: {hint}");
    }
}
