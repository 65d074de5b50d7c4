//! The project's list: the `dod` section of `loop.config.yaml` (the two-list definition of done).
//!
//! The YAML is read with limits (an anchor bomb stops at a budget, not at the memory limit),
//! duplicate keys are an error, and the `dod` section is closed: an unknown field, a wrong type,
//! a kind dwp cannot prove (there is no `manual` kind), a glob or regex that does not compile or
//! a path leaving the worktree refuses the whole file, naming the file and the field. Other
//! top-level sections belong to the harness (`delivery`, ...) and are not dwp's to judge.

use super::loop_schema::LoopSchema;
use crate::error::Result;
use globset::{Glob, GlobMatcher, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The kinds an item can be proven by. Anything else is a configuration error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Command,
    FileChanged,
    PatternAbsent,
}

impl Kind {
    pub const NAMES: [&'static str; 3] = ["command", "file-changed", "pattern-absent"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawItem {
    id: String,
    description: String,
    kind: Kind,
    command: Option<Vec<String>>,
    glob: Option<String>,
    pattern: Option<String>,
    paths: Option<Vec<String>>,
}

/// How one item of the project's list is proven.
#[derive(Debug, Clone)]
pub enum Check {
    /// Argv the worker runs in its worktree; exit 0 is the proof.
    Command(Vec<String>),
    /// The change must touch a path matching the glob.
    FileChanged { glob: String, matcher: GlobMatcher },
    /// No changed file (among `paths`, when given) may contain the pattern.
    PatternAbsent {
        pattern: String,
        regex: regex::bytes::Regex,
        paths: Option<GlobSet>,
    },
}

#[derive(Debug, Clone)]
pub struct DodItem {
    pub id: String,
    pub description: String,
    pub check: Check,
}

impl DodItem {
    pub fn kind(&self) -> Kind {
        match self.check {
            Check::Command(_) => Kind::Command,
            Check::FileChanged { .. } => Kind::FileChanged,
            Check::PatternAbsent { .. } => Kind::PatternAbsent,
        }
    }
}

/// The project's list, as configured.
#[derive(Debug, Clone)]
pub struct LoopConfig {
    pub path: PathBuf,
    pub items: Vec<DodItem>,
}

/// Limits on the YAML reader: generous for a configuration file, far below what an anchor
/// bomb ("billion laughs") needs to exhaust memory.
fn yaml_options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_events: 100_000,
            max_aliases: 1_000,
            max_anchors: 1_000,
            max_depth: 64,
            max_documents: 1,
            max_nodes: 100_000,
            max_total_scalar_bytes: 4 * 1024 * 1024,
        },
        alias_limits: serde_saphyr::alias_limits! {
            max_total_replayed_events: 10_000,
            max_replay_stack_depth: 16,
            max_alias_expansions_per_anchor: 100,
        },
        duplicate_keys: serde_saphyr::options::DuplicateKeyPolicy::Error,
        with_snippet: false,
        strict_booleans: true,
    }
}

/// Load and check `loop.config.yaml`.
pub fn load(path: &Path) -> Result<LoopConfig> {
    let bytes = super::read_input(path)?;
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        super::rejected_at(path, "$", format!("not UTF-8: {e}"))
            .with_hint("save loop.config.yaml as UTF-8")
    })?;
    let document: Value = serde_saphyr::from_str_with_options(text, yaml_options())
        .map_err(|e| {
            super::rejected_at(path, "$", format!("not YAML dwp accepts: {}", one_line(&e.to_string())))
                .with_hint("duplicate keys, more than one document and alias expansions beyond a small budget are refused")
        })?;
    let dod = match &document {
        Value::Null => return Ok(empty(path)),
        Value::Object(map) => map.get("dod"),
        _ => {
            return Err(super::rejected_at(path, "$", "is not a mapping")
                .with_hint("loop.config.yaml is a mapping with a `dod:` section"));
        }
    };
    let Some(dod) = dod else {
        return Ok(empty(path));
    };
    refuse_unknown_kinds(path, dod)?;
    if let Some(first) = LoopSchema::ConfigDod.check(dod, "$.dod").into_iter().next() {
        return Err(
            super::rejected_at(path, &first.path, first.message).with_hint(
                "see docs/loop.md and schemas/loop/config-dod.schema.json for the dod section",
            ),
        );
    }
    let raw: Vec<RawItem> = match dod.get("items") {
        Some(items) => serde_json::from_value(items.clone()).map_err(|e| {
            super::rejected_at(path, "$.dod.items", e.to_string())
                .with_hint("see docs/loop.md for the dod section")
        })?,
        None => Vec::new(),
    };
    let mut items = Vec::with_capacity(raw.len());
    for (index, raw) in raw.into_iter().enumerate() {
        if let Some(first) = items.iter().position(|i: &DodItem| i.id == raw.id) {
            return Err(super::rejected_at(
                path,
                &format!("$.dod.items[{index}].id"),
                format!(
                    "item `{}` is declared twice (first at $.dod.items[{first}])",
                    raw.id
                ),
            )
            .with_hint("every item has its own id: proofs are matched by id"));
        }
        items.push(item(path, index, raw)?);
    }
    Ok(LoopConfig {
        path: path.to_path_buf(),
        items,
    })
}

fn empty(path: &Path) -> LoopConfig {
    LoopConfig {
        path: path.to_path_buf(),
        items: Vec::new(),
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A kind outside the three is named with its item before the schema speaks: `manual` is not
/// an oversight to be fixed with a better spelling, it is refused on purpose.
fn refuse_unknown_kinds(path: &Path, dod: &Value) -> Result<()> {
    let items = dod.get("items").and_then(Value::as_array);
    for (index, item) in items.into_iter().flatten().enumerate() {
        let Some(kind) = item.get("kind").and_then(Value::as_str) else {
            continue;
        };
        if Kind::NAMES.contains(&kind) {
            continue;
        }
        let id = item.get("id").and_then(Value::as_str).unwrap_or("?");
        let hint = if kind == "manual" {
            "there is no manual kind: a proof that is \"someone looked at it\" cannot gate an unattended merge; human review is delivery.merge.requireHumanApproval"
        } else {
            "the kinds are command, file-changed and pattern-absent"
        };
        return Err(super::rejected_at(
            path,
            &format!("$.dod.items[{index}].kind"),
            format!("item `{id}` has kind `{kind}`, which dwp cannot prove"),
        )
        .with_hint(hint));
    }
    Ok(())
}

fn item(path: &Path, index: usize, raw: RawItem) -> Result<DodItem> {
    let field = |name: &str| format!("$.dod.items[{index}].{name}");
    let id = raw.id;
    let check = match raw.kind {
        // The schema requires the kind's own field; `unwrap_or_default` never fires.
        Kind::Command => Check::Command(raw.command.unwrap_or_default()),
        Kind::FileChanged => {
            let glob = raw.glob.unwrap_or_default();
            let matcher = compile_glob(path, &field("glob"), &id, &glob)?.compile_matcher();
            Check::FileChanged { glob, matcher }
        }
        Kind::PatternAbsent => {
            let pattern = raw.pattern.unwrap_or_default();
            let regex = regex::bytes::RegexBuilder::new(&pattern)
                .multi_line(true)
                .build()
                .map_err(|e| {
                    super::rejected_at(
                        path,
                        &field("pattern"),
                        format!(
                            "item `{id}`: the regex does not compile: {}",
                            one_line(&e.to_string())
                        ),
                    )
                    .with_hint("Rust regex syntax (docs.rs/regex); escape a literal metacharacter with `\\`")
                })?;
            let paths = match raw.paths {
                Some(globs) => Some(glob_set(path, index, &id, &globs)?),
                None => None,
            };
            Check::PatternAbsent {
                pattern,
                regex,
                paths,
            }
        }
    };
    Ok(DodItem {
        id,
        description: raw.description,
        check,
    })
}

fn compile_glob(path: &Path, field: &str, id: &str, glob: &str) -> Result<Glob> {
    if !super::is_inside_relative(glob.trim_start_matches("**/")) {
        return Err(super::rejected_at(
            path,
            field,
            format!("item `{id}`: `{glob}` escapes the worktree"),
        )
        .with_hint("globs are relative to the worktree root, without `..` or a leading `/`"));
    }
    Glob::new(glob).map_err(|e| {
        super::rejected_at(
            path,
            field,
            format!("item `{id}`: the glob does not compile: {}", e.kind()),
        )
        .with_hint("globset syntax: `*`, `**`, `?`, `[ab]`, `{a,b}`, relative to the worktree root")
    })
}

fn glob_set(path: &Path, index: usize, id: &str, globs: &[String]) -> Result<GlobSet> {
    let mut builder = GlobSetBuilder::new();
    for (i, glob) in globs.iter().enumerate() {
        let field = format!("$.dod.items[{index}].paths[{i}]");
        builder.add(compile_glob(path, &field, id, glob)?);
    }
    builder.build().map_err(|e| {
        super::rejected_at(path, &format!("$.dod.items[{index}].paths"), e.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_text(text: &str) -> Result<LoopConfig> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("loop.config.yaml");
        std::fs::write(&path, text).unwrap();
        load(&path)
    }

    fn refusal(text: &str) -> String {
        load_text(text).unwrap_err().to_string()
    }

    #[test]
    fn the_three_kinds_load() {
        let config = load_text(
            "dod:\n  items:\n    - {id: tests, description: t, kind: command, command: [cargo, test]}\n    - {id: docs, description: d, kind: file-changed, glob: 'docs/**'}\n    - {id: todo, description: n, kind: pattern-absent, pattern: 'TODO', paths: ['src/**']}\ndelivery:\n  merge:\n    requireHumanApproval: true\n",
        )
        .unwrap();
        let kinds: Vec<_> = config.items.iter().map(DodItem::kind).collect();
        assert_eq!(
            kinds,
            [Kind::Command, Kind::FileChanged, Kind::PatternAbsent]
        );
    }

    #[test]
    fn no_manual_kind_names_the_item() {
        let text = refusal("dod:\n  items:\n    - {id: review, description: r, kind: manual}\n");
        assert!(text.contains("item `review` has kind `manual`"), "{text}");
        assert!(text.contains("$.dod.items[0].kind"), "{text}");
    }

    #[test]
    fn duplicate_yaml_keys_are_refused() {
        let text = refusal("dod:\n  items: []\n  items: []\n");
        assert!(text.contains("duplicate"), "{text}");
    }

    #[test]
    fn an_anchor_bomb_stops_at_the_budget() {
        let mut yaml = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for n in 1..10 {
            let prev = (b'a' + n - 1) as char;
            let name = (b'a' + n) as char;
            yaml.push_str(&format!(
                "{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
            ));
        }
        let started = std::time::Instant::now();
        let text = refusal(&yaml);
        assert!(text.contains("not YAML dwp accepts"), "{text}");
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn unknown_fields_and_wrong_types_name_the_field() {
        let text = refusal(
            "dod:\n  items:\n    - {id: t, description: t, kind: command, command: [x], colour: red}\n",
        );
        assert!(text.contains("$.dod.items[0]"), "{text}");
        assert!(text.contains("colour"), "{text}");
        let text = refusal(
            "dod:\n  items:\n    - {id: t, description: t, kind: command, command: cargo test}\n",
        );
        assert!(text.contains("$.dod.items[0].command"), "{text}");
        let text = refusal("dod:\n  itmes: []\n");
        assert!(text.contains("itmes"), "{text}");
    }

    #[test]
    fn globs_and_regexes_that_do_not_compile_are_refused() {
        let text = refusal(
            "dod:\n  items:\n    - {id: g, description: g, kind: file-changed, glob: 'src/[a'}\n",
        );
        assert!(
            text.contains("$.dod.items[0].glob") && text.contains("does not compile"),
            "{text}"
        );
        let text = refusal(
            "dod:\n  items:\n    - {id: r, description: r, kind: pattern-absent, pattern: '(unclosed'}\n",
        );
        assert!(
            text.contains("$.dod.items[0].pattern") && text.contains("does not compile"),
            "{text}"
        );
    }

    #[test]
    fn a_glob_escaping_the_worktree_is_refused() {
        let text = refusal(
            "dod:\n  items:\n    - {id: g, description: g, kind: pattern-absent, pattern: x, paths: ['../secrets/**']}\n",
        );
        assert!(
            text.contains("$.dod.items[0].paths[0]") && text.contains("escapes the worktree"),
            "{text}"
        );
    }

    #[test]
    fn yaml_1_1_booleans_stay_strings_and_true_is_not_an_argv_word() {
        let config = load_text("dod:\n  items:\n    - {id: n, description: n, kind: command, command: [echo, n, yes]}\n").unwrap();
        assert!(
            matches!(&config.items[0].check, Check::Command(argv) if argv == &["echo", "n", "yes"])
        );
        let text = refusal(
            "dod:\n  items:\n    - {id: t, description: t, kind: command, command: [true]}\n",
        );
        assert!(text.contains("$.dod.items[0].command[0]"), "{text}");
    }

    #[test]
    fn no_dod_section_means_an_empty_project_list() {
        assert!(load_text("delivery: {}\n").unwrap().items.is_empty());
    }
}
