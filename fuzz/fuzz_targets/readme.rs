//! `dwp::plan::markdown::parse_readme` on arbitrary bytes (read as lossy UTF-8): it must never panic.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let readme = dwp::plan::markdown::parse_readme(&text);
    // The derived lookups every command makes on a README.
    let _ = readme.approval();
    let _ = readme.variable("Plan Format");
});
