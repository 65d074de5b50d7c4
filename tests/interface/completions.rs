//! `dwp completions SHELL` and `dwp man [SUBCOMMAND]`: text generated from the command line's
//! own definition. Every shell's script names every top-level command; the bash script (and the
//! zsh one, where zsh is installed) passes the shell's syntax check; the bash script and the man
//! pages are held to snapshots, so a change to the command line shows up in review.

use crate::common;
use dwp::cli::help::command;
use std::process::Command;

const SHELLS: [&str; 5] = ["bash", "zsh", "fish", "powershell", "elvish"];

fn top_level_names() -> Vec<String> {
    command()
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect()
}

fn completions(shell: &str) -> String {
    let run = common::dwp().args(["completions", shell]).run_utf8();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    run.stdout
}

/// `SHELL -n FILE` on `script`: exit 0, or the shell's complaint.
fn syntax_check(shell: &str, script: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(format!("dwp.{shell}"));
    std::fs::write(&file, script).unwrap();
    let output = Command::new(shell).arg("-n").arg(&file).output().unwrap();
    assert!(
        output.status.success(),
        "{shell} -n rejects the script: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn installed(program: &str) -> bool {
    Command::new(program)
        .args(["-c", "exit 0"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn every_shell_script_names_every_top_level_command() {
    for shell in SHELLS {
        let script = completions(shell);
        assert!(!script.trim().is_empty(), "{shell}: an empty script");
        for name in top_level_names() {
            assert!(script.contains(&name), "{shell}: `{name}` is not completed");
        }
    }
}

#[test]
fn the_bash_script_passes_bash_syntax_check() {
    syntax_check("bash", &completions("bash"));
}

#[test]
fn the_zsh_script_passes_zsh_syntax_check_where_zsh_is_installed() {
    if !installed("zsh") {
        println!("SKIPPED: zsh is not installed here, so `zsh -n` did not run on the zsh script");
        return;
    }
    syntax_check("zsh", &completions("zsh"));
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let run = common::dwp().args(["completions", "tcsh"]).run();
    assert_eq!(run.code, 2, "{}", run.stderr);
}

#[test]
fn with_json_the_script_is_one_document() {
    let run = common::dwp()
        .args(["completions", "fish", "--json"])
        .run_utf8();
    assert_eq!(run.code, 0);
    let document = run.json();
    assert_eq!(document["command"], "completions");
    assert_eq!(document["ok"], true);
    assert_eq!(document["completions"]["shell"], "fish");
    assert_eq!(
        document["completions"]["script"].as_str(),
        Some(completions("fish").as_str())
    );
}

#[test]
fn snapshot_bash_completions() {
    insta::assert_snapshot!("bash_completions", completions("bash"));
}

fn man(path: &[&str]) -> String {
    let run = common::dwp().arg("man").args(path).run_utf8();
    assert_eq!(run.code, 0, "dwp man {path:?}: {}", run.stderr);
    run.stdout
}

#[test]
fn snapshot_man_page() {
    let page = man(&[]);
    assert!(page.contains(".TH dwp 1"), "{page}");
    for name in top_level_names() {
        assert!(
            page.contains(&format!("dwp\\-{name}(1)")),
            "dwp(1) does not list dwp-{name}(1)"
        );
    }
    assert!(
        page.contains(".SH \"EXIT CODES\"\n.nf\n0  success"),
        "{page}"
    );
    insta::assert_snapshot!("man_dwp", page);
}

/// A page's `.TH` line has its five fields (title, section, date, source, manual): a
/// subcommand's once lacked the date, so roff read its source as the date.
#[test]
fn a_man_page_header_has_title_section_date_source_and_manual() {
    for path in [&[][..], &["verify"][..], &["lock", "recover"][..]] {
        let page = man(path);
        let header = page.lines().find(|l| l.starts_with(".TH ")).unwrap();
        let title = match path.is_empty() {
            true => "dwp".to_owned(),
            false => format!("dwp-{}", path.join("-")),
        };
        let date = &common::NOW[..10];
        let version = env!("CARGO_PKG_VERSION");
        assert_eq!(
            header,
            format!(".TH {title} 1 {date} \"dwp {version}\" \"dwp manual\""),
            "{path:?}"
        );
    }
}

#[test]
fn snapshot_man_page_of_a_subcommand() {
    let page = man(&["lock", "recover"]);
    assert!(page.contains(".TH dwp-lock-recover 1"), "{page}");
    insta::assert_snapshot!("man_dwp_lock_recover", page);
}

/// Every page `dwp man` lists can be printed, and ends with its examples as written.
#[test]
fn every_subcommand_has_a_man_page_with_its_examples() {
    fn walk(command: &clap::Command, prefix: &[&str]) {
        for sub in command.get_subcommands() {
            let mut path = prefix.to_vec();
            path.push(sub.get_name());
            let page = man(&path);
            assert!(
                page.contains(&format!(".TH dwp-{} 1", path.join("-"))),
                "{path:?}: {page}"
            );
            if sub
                .get_after_help()
                .is_some_and(|h| h.to_string().contains("Examples:"))
            {
                assert!(page.contains(".SH \"EXAMPLES\"\n.nf\n"), "{path:?}: {page}");
            }
            walk(sub, &path);
        }
    }
    walk(&command(), &[]);
}

#[test]
fn a_man_page_of_no_such_subcommand_is_a_usage_error() {
    let run = common::dwp().args(["man", "lock", "open"]).run();
    assert_eq!(run.code, 2);
    run.assert_stderr_says(&[
        "`open` is not a subcommand of `dwp-lock`",
        "status, recover",
    ]);
}
