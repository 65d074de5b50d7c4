//! The `dwp` binary: everything lives in the library; see `dwp --help`.

fn main() -> std::process::ExitCode {
    dwp::cli::main()
}
