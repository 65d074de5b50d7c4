//! `dwp::plan::markdown::parse_task_file` on arbitrary bytes (read as lossy UTF-8): it must never panic.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Some(record) = dwp::plan::markdown::parse_task_file(&text) {
        let _ = record.section("Goal");
        for amendment in &record.amendments {
            let _ = amendment.field("Authority");
        }
    }
});
