//! `dwp amend PLAN --contract DRAFT --by NAME --reason TEXT --note FILE` on a record plan (DWP
//! v6/v7; issue #33, docs/record-plans.md "Writing a record plan"): the next revision of its
//! contract, as the public ledger's `amend` makes it (rule 24): the chain begun with
//! `contract.json`'s bytes, the revision staged, an `amendment` event, the approval of the new
//! revision, then the rename that makes it live; each step found again by a later run, and a
//! refusal writing nothing.

use crate::common::{dwp, fixture_copy, refused, repo_root, writing_nothing};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

const PLAN: &str = "PLAN_021_docs_site_migration";
const REVISED_CHECK: &str = "a strict build of the guides exits 0 and reports no orphan page";
const REASON: &str = "orphan guides built cleanly but were unreachable from the navigation";

/// A copy of the record fixture `case`, with the human's note beside the plan.
struct Amendable {
    _root: tempfile::TempDir,
    plan: PathBuf,
    note: PathBuf,
}

impl Amendable {
    fn of(case: &str) -> Amendable {
        let (root, name) = fixture_copy(case);
        let plan = root.path().join(name);
        let note = root.path().join("amend-note.md");
        std::fs::write(
            &note,
            "I authorize revision 2: orphan pages fail the build.\n",
        )
        .unwrap();
        Amendable {
            _root: root,
            plan,
            note,
        }
    }

    /// The in-progress fixture, which an amendment takes to revision 2.
    fn in_progress() -> Amendable {
        Amendable::of("record-valid-v7-in-progress")
    }

    fn contract(&self) -> Value {
        read_json(&self.plan.join("contract.json"))
    }

    /// A draft beside the plan: the live contract with `edit` made to it.
    fn draft(&self, name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
        let mut draft = self.contract();
        edit(&mut draft);
        let path = self.plan.parent().unwrap().join(name);
        std::fs::write(&path, serde_json::to_vec_pretty(&draft).unwrap()).unwrap();
        path
    }

    /// The draft the tests amend to: AC-guides-build's observable check revised.
    fn revised_draft(&self) -> PathBuf {
        self.draft("draft.json", |draft| {
            draft["acceptance"]["criteria"][1]["observable_check"] = REVISED_CHECK.into();
        })
    }

    /// `dwp amend PLAN --contract DRAFT --by maria.lopez --reason REASON --note NOTE --json`.
    fn amend(&self, draft: &Path) -> crate::common::Run {
        self.amend_with(draft, &["--json"])
    }

    fn amend_with(&self, draft: &Path, extra: &[&str]) -> crate::common::Run {
        dwp()
            .args(["amend", self.plan.to_str().unwrap(), "--contract"])
            .arg(draft)
            .args(["--by", "maria.lopez", "--reason", REASON, "--note"])
            .arg(&self.note)
            .args(extra)
            .run_utf8()
    }

    fn journal(&self) -> Vec<Value> {
        journal(&self.plan)
    }
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn journal(plan: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(plan.join("journal.ndjson")).unwrap();
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

// Rule 24: the chain begun with contract.json's bytes, revision 2 staged then live, the
// amendment and the approval of the new revision between; verify judges the plan conformant
// at revision 2 and the changed criterion's earlier gate run stale.
#[test]
fn rule_24_an_amendment_begins_the_chain_records_approves_and_makes_revision_2_live() {
    let fixture = Amendable::in_progress();
    let plan = &fixture.plan;
    let live_id = fixture.contract()["contract_id"].clone();
    let contract_json = std::fs::read(plan.join("contract.json")).unwrap();
    let run = fixture.amend(&fixture.revised_draft());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.payload();
    for step in ["chain", "pending", "amendment", "approval", "revision"] {
        assert_eq!(report["steps"][step], "written", "{step}");
    }
    assert_eq!(report["revision"], 2);
    assert_eq!(
        report["invalidated"],
        serde_json::json!(["AC-guides-build"])
    );
    assert_eq!(
        report["affected_tasks"],
        serde_json::json!(["T-convert-guides"])
    );

    let chain = plan.join("contracts");
    assert_eq!(
        std::fs::read(chain.join("contract.r1.json")).unwrap(),
        contract_json,
        "revision 1 is contract.json's bytes"
    );
    let r2 = read_json(&chain.join("contract.r2.json"));
    assert_eq!(r2["revision"], 2);
    assert_eq!(r2["parent_contract_id"], live_id);
    assert_eq!(r2["contract_id"], report["contract_id"]);
    assert!(!chain.join(".contract.r2.json.pending").exists());

    let events = fixture.journal();
    let (amendment, approval) = (&events[5], &events[6]);
    assert_eq!(amendment["type"], "amendment");
    assert_eq!(
        amendment["contract_id"], live_id,
        "the amendment is made under the live contract"
    );
    assert_eq!(amendment["disposition"], "revised");
    assert_eq!(
        amendment["evidence_invalidated"],
        serde_json::json!(["AC-guides-build"])
    );
    assert_eq!(
        amendment["revised_criterion"],
        format!("AC-guides-build: {REVISED_CHECK}").as_str()
    );
    let marker = format!(
        "human authority marker: note {} sha256:{}",
        fixture.note.display(),
        &format!(
            "{:x}",
            Sha256::digest(std::fs::read(&fixture.note).unwrap())
        )[..16]
    );
    assert_eq!(
        amendment["note"],
        format!(
            "amendment to revision 2 contract {} | {marker}",
            report["contract_id"].as_str().unwrap()
        )
        .as_str()
    );
    assert_eq!(approval["type"], "approval");
    assert_eq!(
        approval["contract_id"], report["contract_id"],
        "the approval cites the new revision"
    );
    assert_eq!(
        approval["mechanism"], "pre_authorization",
        "the live contract's"
    );
    assert_eq!(
        approval["note"],
        format!("approves revision 2 ({REASON}) | {marker}").as_str()
    );

    let verify = dwp().args(["verify", plan.to_str().unwrap()]).run_utf8();
    assert_eq!(verify.code, 0, "{}", verify.stdout);
    assert!(verify.stdout.contains("CONFORMANT"), "{}", verify.stdout);
    assert!(
        verify
            .stdout
            .contains("contracts/contract.r2.json (revision 2)"),
        "{}",
        verify.stdout
    );
    let status = dwp()
        .args(["status", plan.to_str().unwrap(), "--json"])
        .run_utf8()
        .payload();
    assert_eq!(status["contract"]["revision"], 2);
    let guides = &status["tasks"][1]["criteria"][0];
    assert_eq!(guides["criterion"], "AC-guides-build");
    assert_eq!(guides["stale_seqs"], serde_json::json!([5]), "{status:#}");
}

// Rule 24: every step is found by a later run; the same amendment again writes nothing.
#[test]
fn rule_24_the_same_amendment_again_writes_nothing() {
    let fixture = Amendable::in_progress();
    let draft = fixture.revised_draft();
    assert_eq!(fixture.amend(&draft).code, 0);
    let again = writing_nothing(&fixture.plan, "the same amendment again", || {
        fixture.amend(&draft)
    });
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.payload()["unchanged"], true);
    assert_eq!(again.payload()["revision"], 2);
}

// Rule 24: a run killed after the approval and before the rename leaves an approval of a
// revision not yet live; verify does not call the plan broken, and the same amendment again
// finds each step and makes the revision live, as a run never killed does.
#[test]
fn rule_24_an_amendment_stopped_before_its_rename_is_completed_by_running_it_again() {
    let whole = Amendable::in_progress();
    let draft = whole.revised_draft();
    assert_eq!(whole.amend(&draft).code, 0);

    let cut = Amendable::in_progress();
    let chain = cut.plan.join("contracts");
    crate::common::copy_plan(&whole.plan.join("contracts"), &chain);
    std::fs::rename(
        chain.join("contract.r2.json"),
        chain.join(".contract.r2.json.pending"),
    )
    .unwrap();
    std::fs::copy(
        whole.plan.join("journal.ndjson"),
        cut.plan.join("journal.ndjson"),
    )
    .unwrap();
    let verify = dwp()
        .args(["verify", cut.plan.to_str().unwrap()])
        .run_utf8();
    assert_eq!(verify.code, 0, "{}", verify.stdout);

    // The same amendment: the same draft and note as the run the events come from.
    let run = dwp()
        .args(["amend", cut.plan.to_str().unwrap(), "--contract"])
        .arg(&draft)
        .args(["--by", "maria.lopez", "--reason", REASON, "--note"])
        .arg(&whole.note)
        .arg("--json")
        .run_utf8();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let steps = &run.payload()["steps"];
    for (step, word) in [
        ("chain", "found"),
        ("pending", "found"),
        ("amendment", "found"),
        ("approval", "found"),
        ("revision", "written"),
    ] {
        assert_eq!(steps[step], word, "{step}");
    }
    for file in [
        "contracts/contract.r1.json",
        "contracts/contract.r2.json",
        "journal.ndjson",
        "state.json",
    ] {
        assert_eq!(
            std::fs::read(cut.plan.join(file)).unwrap(),
            std::fs::read(whole.plan.join(file)).unwrap(),
            "{file}"
        );
    }
}

// Rule 24: a draft equal in substance to the live contract amends nothing.
#[test]
fn rule_24_a_draft_equal_to_the_live_contract_writes_nothing() {
    let fixture = Amendable::in_progress();
    let same = fixture.draft("same.json", |draft| {
        draft.as_object_mut().unwrap().remove("contract_id");
    });
    let run = writing_nothing(&fixture.plan, "a draft equal to the live contract", || {
        fixture.amend(&same)
    });
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.payload()["unchanged"], true);
    assert_eq!(run.payload()["steps"], Value::Null);
}

/// A draft refused: its name, the edit that makes it, and words of the refusal.
type Refused = (&'static str, fn(&mut Value), &'static [&'static str]);

// Rule 2: a revision chains from the live one, in its plan and generation; any other draft is
// refused before anything is written.
#[test]
fn rule_2_a_draft_naming_another_link_plan_or_generation_is_refused() {
    let fixture = Amendable::in_progress();
    let revise = |draft: &mut Value| {
        draft["acceptance"]["criteria"][1]["observable_check"] = REVISED_CHECK.into();
    };
    let cases: [Refused; 4] = [
        (
            "revision",
            |d: &mut Value| d["revision"] = 3.into(),
            &["must be revision 2 with parent 83a9476f2138"],
        ),
        (
            "parent",
            |d: &mut Value| {
                d["revision"] = 2.into();
                d["parent_contract_id"] = "f".repeat(64).into();
            },
            &["must be revision 2 with parent 83a9476f2138"],
        ),
        (
            "plan",
            |d: &mut Value| d["plan"] = "PLAN_022_another_plan".into(),
            &["keeps the plan and its generation (v7)"],
        ),
        (
            "generation",
            |d: &mut Value| {
                d["schema"] = "https://deepworkplan.com/schema/plan-contract/v6.json".into();
            },
            &["keeps the plan and its generation (v7)"],
        ),
    ];
    for (name, edit, words) in cases {
        let draft = fixture.draft(&format!("{name}.json"), |draft| {
            revise(draft);
            edit(draft);
        });
        refused(&fixture.plan, "amend", 1, words, || {
            fixture.amend_with(&draft, &[])
        });
    }
    let invalid = fixture.draft("invalid.json", |draft| {
        revise(draft);
        draft.as_object_mut().unwrap().remove("tasks");
    });
    refused(&fixture.plan, "amend", 1, &["is no valid contract"], || {
        fixture.amend_with(&invalid, &[])
    });
}

// Rule 24: one revision is pending at a time; another draft is refused while it is.
#[test]
fn rule_24_a_different_revision_pending_is_refused() {
    let fixture = Amendable::in_progress();
    let other = fixture.draft("other.json", |draft| {
        draft["title"] = "Another revision 2".into();
    });
    std::fs::create_dir(fixture.plan.join("contracts")).unwrap();
    let mut pending = read_json(&other);
    pending["revision"] = 2.into();
    pending["contract_id"] = "e".repeat(64).into();
    std::fs::write(
        fixture.plan.join("contracts/.contract.r2.json.pending"),
        serde_json::to_vec_pretty(&pending).unwrap(),
    )
    .unwrap();
    refused(
        &fixture.plan,
        "amend",
        1,
        &[
            "stages a different revision 2 (eeeeeeeeeeee)",
            "its own draft first",
        ],
        || fixture.amend_with(&fixture.revised_draft(), &[]),
    );
}

// Rule 12: a human record carries its marker: without the note, or the draft, or the name,
// the amendment is a usage error; the v5 amendment's flags are refused on a record plan, and a
// record plan's on a v5 plan.
#[test]
fn rule_12_a_record_amendment_needs_its_draft_authority_and_note() {
    let fixture = Amendable::in_progress();
    let draft = fixture.revised_draft();
    let path = fixture.plan.to_str().unwrap();
    refused(&fixture.plan, "amend", 2, &["--note FILE"], || {
        dwp()
            .args(["amend", path, "--contract"])
            .arg(&draft)
            .args(["--by", "maria.lopez", "--reason", REASON])
            .run_utf8()
    });
    refused(
        &fixture.plan,
        "amend",
        2,
        &["--task", "v5 plan's amendment"],
        || fixture.amend_with(&draft, &["--task", "2"]),
    );
    // Without --contract, clap asks for the v5 amendment's flags; on a record plan dwp names
    // the record amendment's instead.
    refused(
        &fixture.plan,
        "amend",
        2,
        &["a record plan is amended by the next revision of its contract: --contract DRAFT"],
        || dwp().args(["amend", path, "--reason", REASON]).run_utf8(),
    );
    let (v5_root, v5) = fixture_copy("valid-full-v5");
    let v5 = v5_root.path().join(v5);
    refused(
        &v5,
        "amend",
        2,
        &["--contract amends a record plan's contract"],
        || {
            dwp()
                .args(["amend", v5.to_str().unwrap(), "--contract"])
                .arg(&draft)
                .args(["--by", "ana", "--reason", REASON, "--note"])
                .arg(&fixture.note)
                .run_utf8()
        },
    );
}

// Rule 24, in the public ledger's bytes: amending the amended fixture's revision 1 with its
// revision 2's content writes the fixture's own contracts/ files, byte for byte, and the same
// amendment and approval events but for their time.
#[test]
fn rule_24_amending_revision_1_to_the_fixtures_revision_2_writes_its_bytes() {
    let fixture = Amendable::of("record-valid-v7-amended");
    let plan = &fixture.plan;
    let source = repo_root()
        .join("conformance-fixtures/record-valid-v7-amended")
        .join(PLAN);
    let draft = plan.parent().unwrap().join("r2.json");
    std::fs::rename(plan.join("contracts/contract.r2.json"), &draft).unwrap();
    std::fs::remove_dir_all(plan.join("contracts")).unwrap();
    // The journal as it stood before the fixture's amendment (its first five events).
    let text = std::fs::read_to_string(plan.join("journal.ndjson")).unwrap();
    let kept: String = text.lines().take(5).map(|l| format!("{l}\n")).collect();
    std::fs::write(plan.join("journal.ndjson"), kept).unwrap();
    let run = dwp()
        .in_dir(plan)
        .args(["amend", ".", "--contract"])
        .arg(&draft)
        .args(["--by", "maria.lopez", "--reason", REASON])
        .args(["--note", "notes/amend-r2.md"])
        .run_utf8();
    assert_eq!(run.code, 0, "{}", run.stderr);
    for file in ["contracts/contract.r1.json", "contracts/contract.r2.json"] {
        assert_eq!(
            std::fs::read(plan.join(file)).unwrap(),
            std::fs::read(source.join(file)).unwrap(),
            "{file} in the public ledger's bytes"
        );
    }
    let without_time = |mut event: Value| {
        event.as_object_mut().unwrap().remove("ts");
        event
    };
    let ours = fixture.journal();
    let theirs = journal(&source);
    for seq in [5, 6] {
        assert_eq!(
            without_time(ours[seq].clone()),
            without_time(theirs[seq].clone()),
            "event {}",
            seq + 1
        );
    }
}
