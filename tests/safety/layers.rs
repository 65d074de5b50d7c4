//! The layers of `docs/ARCHITECTURE.md`, held against the code (issue #14): every module of
//! `src/` is listed in the document under the layer of its folder, and no module imports from a
//! layer above its own, nor a command from another command. The document cannot drift from the
//! code, and a new upward import fails here with the line that made it.

use crate::common;
use std::collections::BTreeMap;
use std::path::Path;

/// The layers, bottom first. A module may import its own layer and the ones below, except that
/// a command imports no other command; `support` (test support) imports below `commands`.
const LAYERS: [&str; 8] = [
    "base", "store", "plan", "rules", "steps", "support", "commands", "cli",
];

fn rank(layer: &str) -> usize {
    LAYERS
        .iter()
        .position(|l| *l == layer)
        .unwrap_or_else(|| panic!("unknown layer {layer}"))
}

/// The layer a module's folder puts it in.
fn folder_layer(module: &str) -> &'static str {
    match module.split("::").next().unwrap_or_default() {
        "store" => "store",
        "plan" => "plan",
        "rules" => "rules",
        "steps" => "steps",
        "commands" => "commands",
        "cli" => "cli",
        "synth" => "support",
        _ => "base",
    }
}

/// `src/a/b/mod.rs` → `a::b`; `src/a/c.rs` → `a::c`.
fn module_of(root: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(root.join("src")).unwrap();
    let text = relative.with_extension("").to_string_lossy().into_owned();
    let text = text.strip_suffix("/mod").unwrap_or(&text).to_owned();
    text.replace('/', "::")
}

/// The module tables of the document: module → layer (the `### layer` heading above its row).
fn documented(root: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap();
    let mut layer = None;
    let mut modules = BTreeMap::new();
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix("### ") {
            layer = LAYERS
                .contains(&heading.trim())
                .then(|| heading.trim().to_owned());
        } else if let (Some(layer), Some(row)) = (&layer, line.strip_prefix("| `")) {
            let module = row.split('`').next().unwrap().to_owned();
            modules.insert(module, layer.clone());
        }
    }
    modules
}

/// The code of a file without its unit tests and comments.
fn code_of(text: &str) -> String {
    let code = text
        .find("#[cfg(test)]\nmod tests")
        .map_or(text, |at| &text[..at]);
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every path of `code` that leaves its module, as a path from the crate root (`a::b::c`, raw
/// identifiers unwrapped): `crate::a::b::c`, and `super::x` / `super::super::x` resolved against
/// `module` (the parent of a module is `super` whether it is a file or a `mod.rs`).
fn crate_paths(code: &str, module: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for (marker, base) in [("crate::", String::new()), ("super::", parent(module))] {
        let mut rest = code;
        while let Some(at) = rest.find(marker) {
            let preceded =
                rest[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':');
            rest = &rest[at + marker.len()..];
            if preceded {
                continue;
            }
            let path: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':' || *c == '#')
                .collect();
            let mut path = path.replace("r#", "").trim_end_matches(':').to_owned();
            let mut base = base.clone();
            while let Some(up) = path.strip_prefix("super::") {
                base = parent(&base);
                path = up.to_owned();
            }
            if path == "*" || path.is_empty() {
                continue;
            }
            let full = if base.is_empty() {
                path
            } else {
                format!("{base}::{path}")
            };
            paths.push(full);
        }
    }
    paths
}

fn parent(module: &str) -> String {
    module
        .rsplit_once("::")
        .map_or(String::new(), |(p, _)| p.to_owned())
}

/// The documented module a path names: its longest prefix that is a module.
fn target_module<'a>(path: &str, modules: &'a BTreeMap<String, String>) -> Option<&'a str> {
    let segments: Vec<&str> = path.split("::").collect();
    (1..=segments.len())
        .rev()
        .map(|n| segments[..n].join("::"))
        .find_map(|candidate| modules.get_key_value(&candidate).map(|(k, _)| k.as_str()))
}

#[test]
fn every_module_is_documented_under_the_layer_of_its_folder() {
    let root = &common::repo_root();
    let modules = documented(root);
    let mut files = Vec::new();
    common::rust_files(&root.join("src"), &mut files);
    let mut problems = Vec::new();
    let mut in_code = Vec::new();
    for file in &files {
        let module = module_of(root, file);
        if module == "lib" || module == "main" {
            continue;
        }
        match modules.get(&module) {
            None => problems.push(format!("{module}: not in docs/ARCHITECTURE.md")),
            Some(layer) if layer != folder_layer(&module) => problems.push(format!(
                "{module}: listed under {layer}, but its folder puts it in {}",
                folder_layer(&module)
            )),
            Some(_) => {}
        }
        in_code.push(module);
    }
    for module in modules.keys() {
        if !in_code.contains(module) {
            problems.push(format!("{module}: documented, but no such module in src/"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn no_module_imports_from_a_layer_above_it_nor_a_command_from_another() {
    let root = &common::repo_root();
    let modules = documented(root);
    let mut files = Vec::new();
    common::rust_files(&root.join("src"), &mut files);
    let mut problems = Vec::new();
    for file in &files {
        let module = module_of(root, file);
        if module == "lib" || module == "main" {
            continue;
        }
        let layer = folder_layer(&module);
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        for path in crate_paths(&code, &module) {
            // The crate root re-exports only the base's error types.
            if ["Error", "Result", "Exit"].contains(&path.split("::").next().unwrap_or("")) {
                continue;
            }
            let Some(target) = target_module(&path, &modules) else {
                problems.push(format!(
                    "{module}: `crate::{path}` names no documented module"
                ));
                continue;
            };
            let target_layer = folder_layer(target);
            let upward = rank(target_layer) > rank(layer);
            let unit = |m: &str| m.split("::").take(2).collect::<Vec<_>>().join("::");
            let other_command =
                layer == "commands" && target_layer == "commands" && unit(target) != unit(&module);
            let into_support = target_layer == "support" && layer != "support";
            if upward || other_command || into_support {
                problems.push(format!(
                    "{module} ({layer}) imports `crate::{path}` ({target_layer})"
                ));
            }
        }
    }
    problems.sort();
    problems.dedup();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
