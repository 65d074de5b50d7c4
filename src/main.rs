//! The `dwp` binary: everything lives in the library; see `dwp --help`.

// Reading a plan allocates many small strings and frees them together; mimalloc does that
// faster than the system allocator (docs/PERFORMANCE.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    dwp::cli::main()
}
