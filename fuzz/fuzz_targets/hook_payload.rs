//! The hook payload reader on arbitrary bytes (what a harness writes on stdin to
//! `dwp contract record` and `dwp contract check --hook`): it must never panic.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = dwp::commands::contract::payload::parse_post_tool_use(data);
    let _ = dwp::commands::contract::payload::parse_stop(data);
});
