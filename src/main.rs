//! The `dwp` binary: everything lives in the library; see `dwp --help`.

// A static musl build links mimalloc: musl's own allocator is slow at the many small strings a
// plan's reading allocates (docs/DECISIONS.md, "Performance"); glibc's is kept elsewhere.
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    dwp::cli::main()
}
