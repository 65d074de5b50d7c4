//! The hook payloads dwp reads on stdin (Claude Code's shapes): PostToolUse for `record`, Stop
//! for `check --hook`. Strict JSON (no duplicate keys); fields dwp does not use are ignored,
//! since the harness adds fields over time; the ones it uses must have their types.

use crate::error::{Error, Result};
use serde_json::Value;

/// Where payload errors point.
const STDIN: &str = "<stdin>";

/// Largest payload read (a Write payload carries the whole file's content).
pub const MAX_PAYLOAD_BYTES: u64 = 64 * 1024 * 1024;

/// Tools that write the file named in their input, and the input field naming it.
const WRITE_TOOLS: [(&str, &str); 4] = [
    ("Write", "file_path"),
    ("Edit", "file_path"),
    ("MultiEdit", "file_path"),
    ("NotebookEdit", "notebook_path"),
];

/// Claude Code tools that write no file (or none dwp can name): recorded as nothing, exit 0.
const OTHER_TOOLS: [&str; 18] = [
    "Read",
    "Glob",
    "Grep",
    "LS",
    "Bash",
    "BashOutput",
    "KillShell",
    "KillBash",
    "WebFetch",
    "WebSearch",
    "Task",
    "TodoWrite",
    "TodoRead",
    "ExitPlanMode",
    "NotebookRead",
    "SlashCommand",
    "Skill",
    "AskUserQuestion",
];

/// A file-writing tool use, as PostToolUse reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolUse {
    pub tool: String,
    pub file_path: String,
    pub cwd: Option<String>,
    pub session: Option<String>,
}

/// What a PostToolUse payload asks dwp to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostToolUse {
    Write(ToolUse),
    /// A tool that writes no file: nothing to record.
    NotAWrite(String),
}

/// The parts of a Stop payload dwp uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stop {
    /// True when the agent is already continuing because a Stop hook blocked it.
    pub stop_hook_active: bool,
    pub session: Option<String>,
}

fn rejected(field: &str, message: impl Into<String>) -> Error {
    Error::rejected(format!("{STDIN}: {field}"), message)
        .with_hint("the hook payload is the JSON object the harness writes on stdin")
}

fn document(bytes: &[u8]) -> Result<serde_json::Map<String, Value>> {
    let value = crate::plan::json::parse_strict(bytes)
        .map_err(|e| rejected(&e.path, format!("malformed hook payload: {}", e.message)))?;
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(rejected("$", "the hook payload is not a JSON object")),
    }
}

fn optional_string(map: &serde_json::Map<String, Value>, key: &str) -> Result<Option<String>> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(rejected(&format!("$.{key}"), "is not a string")),
    }
}

fn check_event(map: &serde_json::Map<String, Value>, wanted: &[&str]) -> Result<()> {
    match optional_string(map, "hook_event_name")? {
        Some(event) if !wanted.contains(&event.as_str()) => Err(rejected(
            "$.hook_event_name",
            format!(
                "a {event} payload, where {} was expected",
                wanted.join(" or ")
            ),
        )),
        _ => Ok(()),
    }
}

/// Parse a PostToolUse payload.
pub fn parse_post_tool_use(bytes: &[u8]) -> Result<PostToolUse> {
    let map = document(bytes)?;
    check_event(&map, &["PostToolUse"])?;
    let tool = match map.get("tool_name") {
        Some(Value::String(tool)) if !tool.is_empty() => tool.clone(),
        Some(_) => return Err(rejected("$.tool_name", "is not a non-empty string")),
        None => return Err(rejected("$.tool_name", "is missing")),
    };
    let Some((_, field)) = WRITE_TOOLS.iter().find(|(name, _)| *name == tool) else {
        if OTHER_TOOLS.contains(&tool.as_str()) || tool.starts_with("mcp__") {
            return Ok(PostToolUse::NotAWrite(tool));
        }
        return Err(rejected("$.tool_name", format!("unknown tool `{tool}`"))
            .with_hint("dwp records Write, Edit, MultiEdit and NotebookEdit; record another tool's edit with --path P --op OP --tool T"));
    };
    let input = match map.get("tool_input") {
        Some(Value::Object(input)) => input,
        Some(_) => return Err(rejected("$.tool_input", "is not an object")),
        None => return Err(rejected("$.tool_input", "is missing")),
    };
    let file_path = match input.get(*field) {
        Some(Value::String(path)) if !path.is_empty() => path.clone(),
        Some(_) => {
            return Err(rejected(
                &format!("$.tool_input.{field}"),
                "is not a non-empty string",
            ));
        }
        None => {
            return Err(rejected(
                &format!("$.tool_input.{field}"),
                format!("is missing: {tool} names its file there"),
            ));
        }
    };
    Ok(PostToolUse::Write(ToolUse {
        tool,
        file_path,
        cwd: optional_string(&map, "cwd")?,
        session: optional_string(&map, "session_id")?,
    }))
}

/// Parse a Stop (or SubagentStop) payload.
pub fn parse_stop(bytes: &[u8]) -> Result<Stop> {
    let map = document(bytes)?;
    check_event(&map, &["Stop", "SubagentStop"])?;
    let stop_hook_active = match map.get("stop_hook_active") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(active)) => *active,
        Some(_) => return Err(rejected("$.stop_hook_active", "is not true or false")),
    };
    Ok(Stop {
        stop_hook_active,
        session: optional_string(&map, "session_id")?,
    })
}

/// Read stdin, at most [`MAX_PAYLOAD_BYTES`].
pub fn read_stdin() -> Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_PAYLOAD_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io("read", std::path::Path::new(STDIN), e))?;
    if bytes.len() as u64 > MAX_PAYLOAD_BYTES {
        return Err(Error::rejected(
            STDIN,
            format!(
                "the hook payload is too large: over {} MiB ({MAX_PAYLOAD_BYTES} bytes), the most dwp reads",
                MAX_PAYLOAD_BYTES / (1024 * 1024)
            ),
        )
        .with_hint("send the hook's own JSON object on stdin (a few KiB from the harness), not a transcript or a log"));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_tools_name_their_file() {
        let edit = br#"{"session_id":"s1","cwd":"/r","hook_event_name":"PostToolUse",
            "tool_name":"Edit","tool_input":{"file_path":"/r/a.rs","old_string":"x"}}"#;
        let PostToolUse::Write(used) = parse_post_tool_use(edit).unwrap() else {
            panic!("Edit writes");
        };
        assert_eq!(used.file_path, "/r/a.rs");
        assert_eq!(used.session.as_deref(), Some("s1"));
        let notebook = br#"{"tool_name":"NotebookEdit","tool_input":{"notebook_path":"n.ipynb"}}"#;
        assert!(matches!(
            parse_post_tool_use(notebook).unwrap(),
            PostToolUse::Write(ToolUse { ref file_path, .. }) if file_path == "n.ipynb"
        ));
        let read = br#"{"tool_name":"Read","tool_input":{"file_path":"a"}}"#;
        assert!(matches!(
            parse_post_tool_use(read).unwrap(),
            PostToolUse::NotAWrite(_)
        ));
    }

    #[test]
    fn malformed_payloads_name_the_field() {
        let cases: [(&[u8], &str); 6] = [
            (b"{", "$"),
            (b"[]", "$"),
            (
                br#"{"tool_name":"Frobnicate","tool_input":{}}"#,
                "$.tool_name",
            ),
            (br#"{"tool_name":"Edit"}"#, "$.tool_input"),
            (
                br#"{"tool_name":"Edit","tool_input":{"file_path":3}}"#,
                "$.tool_input.file_path",
            ),
            (
                br#"{"tool_name":"Edit","tool_name":"Write","tool_input":{}}"#,
                "tool_name",
            ),
        ];
        for (bytes, field) in cases {
            let error = parse_post_tool_use(bytes).unwrap_err().to_string();
            assert!(error.contains(field), "{error} should name {field}");
        }
        assert!(parse_stop(br#"{"stop_hook_active":"yes"}"#).is_err());
        assert!(parse_stop(br#"{"hook_event_name":"PostToolUse"}"#).is_err());
        assert!(
            parse_stop(br#"{"stop_hook_active":true}"#)
                .unwrap()
                .stop_hook_active
        );
    }
}
