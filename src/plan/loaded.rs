//! One plan folder as a command reads it ([`LoadedPlan`]): every file read through the store at
//! most once, when a rule or a writer first asks for it, and kept for the rest of the command.
//!
//! Writers open it once they hold the plan's lock, so what they judge is what they replace;
//! rules judge it and never read a file themselves. Parsing follows reading: the JSON documents
//! are typed (or their findings kept) when first asked for, the README is parsed once, and the
//! task records are read only by a command that asks for the plan's markdown.

use crate::findings::Finding;
use crate::plan::markdown::Readme;
use crate::plan::model::{DocKind, Manifest, State};
use crate::plan::records::PlanMarkdown;
use crate::plan::{Loaded, PlanPaths};
use crate::store::{self, Entry, Place, ReadFailure};
use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// A JSON document of the plan as loaded: typed, or the findings that stopped it (with the
/// bytes read, when there were any, so findings can be given their lines).
struct JsonDocument<T> {
    loaded: Result<Loaded<T>, Vec<Finding>>,
    bytes_read: Option<Vec<u8>>,
}

/// A file of the plan as read: its bytes, or why not (shared by every reader of it).
pub type FileRead = Rc<Result<Vec<u8>, ReadFailure>>;

/// A folder of the plan as listed: each name and what it is.
type Listing = Rc<crate::Result<Vec<(String, Entry)>>>;

/// A plan folder, read on demand and at most once per file.
pub struct LoadedPlan {
    pub paths: PlanPaths,
    folder: OnceCell<Option<store::PlanFolder>>,
    manifest: OnceCell<JsonDocument<Manifest>>,
    state: OnceCell<JsonDocument<State>>,
    readme_text: OnceCell<Result<String, ReadFailure>>,
    readme: OnceCell<Readme>,
    markdown: OnceCell<PlanMarkdown>,
    files: RefCell<HashMap<PathBuf, FileRead>>,
    /// What a file held before [`LoadedPlan::set_file`] set it as a change leaves it (for the
    /// change's preview).
    originals: HashMap<PathBuf, FileRead>,
    places: RefCell<HashMap<PathBuf, Place>>,
    entries: RefCell<HashMap<PathBuf, Option<Entry>>>,
    listings: RefCell<HashMap<PathBuf, Listing>>,
    in_git: OnceCell<bool>,
}

impl LoadedPlan {
    /// The plan folder `dir`, nothing read yet.
    pub fn open(dir: &Path) -> LoadedPlan {
        LoadedPlan {
            paths: PlanPaths::new(dir),
            folder: OnceCell::new(),
            manifest: OnceCell::new(),
            state: OnceCell::new(),
            readme_text: OnceCell::new(),
            readme: OnceCell::new(),
            markdown: OnceCell::new(),
            files: RefCell::default(),
            originals: HashMap::new(),
            places: RefCell::default(),
            entries: RefCell::default(),
            listings: RefCell::default(),
            in_git: OnceCell::new(),
        }
    }

    /// [`LoadedPlan::open`] of a plan whose state file is `state` (a state.json named on the
    /// command line).
    pub fn open_with_state(dir: &Path, state: &Path) -> LoadedPlan {
        let mut plan = LoadedPlan::open(dir);
        plan.paths.state = state.to_path_buf();
        plan
    }

    /// The plan a command's target names: the folder, or its state file
    /// (`plan::resolve_target`).
    pub fn of_target(target: &Path) -> LoadedPlan {
        let (dir, state) = crate::plan::resolve_target(target);
        LoadedPlan::open_with_state(&dir, &state)
    }

    pub fn dir(&self) -> &Path {
        &self.paths.dir
    }

    /// `manifest.json`, typed, or the findings that stop it.
    pub fn manifest(&self) -> Result<&Loaded<Manifest>, &[Finding]> {
        let document = self.manifest.get_or_init(|| {
            crate::profile::time("load manifest", || {
                self.json_document(DocKind::Manifest, |path, bytes| {
                    crate::plan::typed_document(path, bytes, DocKind::Manifest)
                })
            })
        });
        document.loaded.as_ref().map_err(Vec::as_slice)
    }

    /// `state.json`, typed, or the findings that stop it.
    pub fn state(&self) -> Result<&Loaded<State>, &[Finding]> {
        let document = self.state.get_or_init(|| {
            crate::profile::time("load state", || {
                self.json_document(DocKind::State, crate::plan::typed_state)
            })
        });
        document.loaded.as_ref().map_err(Vec::as_slice)
    }

    /// The bytes of `manifest.json` or `state.json` as read, valid or not (none when they could
    /// not be read).
    pub fn json_bytes(&self, kind: DocKind) -> Option<&[u8]> {
        fn bytes<T>(document: Option<&JsonDocument<T>>) -> Option<&[u8]> {
            let document = document?;
            match &document.loaded {
                Ok(loaded) => Some(&loaded.bytes),
                Err(_) => document.bytes_read.as_deref(),
            }
        }
        match kind {
            DocKind::Manifest => {
                let _ = self.manifest();
                bytes(self.manifest.get())
            }
            DocKind::State => {
                let _ = self.state();
                bytes(self.state.get())
            }
        }
    }

    fn json_document<T>(
        &self,
        kind: DocKind,
        decide: impl FnOnce(&Path, &[u8]) -> Result<(crate::plan::model::Generation, T), Vec<Finding>>,
    ) -> JsonDocument<T> {
        let path = self.paths.artifact(kind);
        let bytes = match crate::plan::read_bytes(path, &self.paths.dir) {
            Ok(bytes) => bytes,
            Err(findings) => {
                return JsonDocument {
                    loaded: Err(findings),
                    bytes_read: None,
                };
            }
        };
        match decide(path, &bytes) {
            Ok((generation, doc)) => JsonDocument {
                loaded: Ok(Loaded::new(path, bytes, generation, doc)),
                bytes_read: None,
            },
            Err(findings) => JsonDocument {
                loaded: Err(findings),
                bytes_read: Some(bytes),
            },
        }
    }

    /// The bytes of state.json as a JSON artifact is read (never through a symlink), or the
    /// findings that stop the read; read afresh on each call.
    pub fn state_bytes(&self) -> Result<Vec<u8>, Vec<Finding>> {
        crate::plan::read_bytes(&self.paths.state, &self.paths.dir)
    }

    /// README.md as text (strict UTF-8), or why it could not be read.
    pub fn readme_text(&self) -> Result<&str, &ReadFailure> {
        self.readme_text
            .get_or_init(|| {
                let path = self.paths.dir.join("README.md");
                crate::profile::time("read README", || self.read_text(&path))
            })
            .as_ref()
            .map(String::as_str)
    }

    /// README.md parsed (once).
    pub fn readme(&self) -> Result<&Readme, &ReadFailure> {
        let text = self.readme_text()?;
        Ok(self
            .readme
            .get_or_init(|| crate::plan::markdown::parse_readme(text)))
    }

    /// The plan's markdown: the README and every task record its index names, each task file
    /// read once; the README's read failure when it could not be read.
    pub fn markdown(&self) -> Result<&PlanMarkdown, &ReadFailure> {
        let readme = self.readme()?;
        Ok(self.markdown.get_or_init(|| {
            crate::profile::time("read markdown", || {
                crate::plan::records::markdown_of(self, readme.clone())
            })
        }))
    }

    /// [`LoadedPlan::markdown`], owned.
    pub fn into_markdown(self) -> Result<PlanMarkdown, ReadFailure> {
        let _ = self.markdown();
        match self.markdown.into_inner() {
            Some(markdown) => Ok(markdown),
            None => Err(match self.readme_text.into_inner() {
                Some(Err(failure)) => failure,
                _ => unreachable!("the markdown is read unless the README is not"),
            }),
        }
    }

    /// The plan as it will be once the file `path` holds `bytes`: what a writer that edits it
    /// in the same change judges (its README box ticked, an amendment appended to a task
    /// log). The README and the task records are parsed again when next asked for.
    pub fn set_file(&mut self, path: &Path, bytes: Vec<u8>) {
        let before = self.read(path);
        self.originals.entry(path.to_path_buf()).or_insert(before);
        if path == self.paths.dir.join("README.md") {
            self.readme_text = OnceCell::from(store::decode_text(bytes.clone()));
            self.readme = OnceCell::new();
        }
        self.markdown = OnceCell::new();
        self.files
            .get_mut()
            .insert(path.to_path_buf(), Rc::new(Ok(bytes)));
        self.places
            .get_mut()
            .insert(path.to_path_buf(), Place::File);
        self.entries
            .get_mut()
            .insert(path.to_path_buf(), Some(Entry::File));
    }

    /// The bytes at `path` before any [`LoadedPlan::set_file`] (for a preview of the change):
    /// `None` when there is no file.
    pub fn current_bytes(&self, path: &Path) -> Result<Option<Vec<u8>>, ReadFailure> {
        let kind = [DocKind::Manifest, DocKind::State]
            .into_iter()
            .find(|kind| self.paths.artifact(*kind) == path);
        if let Some(bytes) = kind.and_then(|kind| self.json_bytes(kind)) {
            return Ok(Some(bytes.to_vec()));
        }
        let read = match self.originals.get(path) {
            Some(read) => Rc::clone(read),
            None => self.read(path),
        };
        match &*read {
            Ok(bytes) => Ok(Some(bytes.clone())),
            Err(ReadFailure::Missing) => Ok(None),
            Err(failure) => Err(failure.clone_kind()),
        }
    }

    /// Whether the plan file at `path` was read already (or set by the change being planned).
    pub(crate) fn is_read(&self, path: &Path) -> bool {
        self.files.borrow().contains_key(path)
    }

    /// Task files the markdown reader read, kept as the bytes every later read of them gets.
    pub(crate) fn keep_read(&self, path: &Path, text: String) {
        self.files
            .borrow_mut()
            .entry(path.to_path_buf())
            .or_insert_with(|| Rc::new(Ok(text.into_bytes())));
    }

    /// The bytes of the plan file at `path` (inside the plan folder), read once.
    pub fn read(&self, path: &Path) -> FileRead {
        if let Some(read) = self.files.borrow().get(path) {
            return Rc::clone(read);
        }
        let read = Rc::new(self.read_uncached(path));
        self.files
            .borrow_mut()
            .insert(path.to_path_buf(), Rc::clone(&read));
        read
    }

    /// The plan file at `path` as strict UTF-8 text, read once.
    pub fn read_text(&self, path: &Path) -> Result<String, ReadFailure> {
        match &*self.read(path) {
            Ok(bytes) => store::decode_text(bytes.clone()),
            Err(failure) => Err(failure.clone_kind()),
        }
    }

    fn read_uncached(&self, path: &Path) -> Result<Vec<u8>, ReadFailure> {
        match self.folder() {
            Some(folder) => folder.read(path),
            None => store::read_artifact(path, &self.paths.dir),
        }
    }

    /// The plan folder held open for its reads, when it can be.
    pub(crate) fn folder(&self) -> Option<&store::PlanFolder> {
        self.folder
            .get_or_init(|| store::PlanFolder::open(&self.paths.dir).ok())
            .as_ref()
    }

    /// Where `path` (inside the plan folder) leads, looked at once.
    pub fn place(&self, path: &Path) -> Place {
        if let Some(place) = self.places.borrow().get(path) {
            return *place;
        }
        let place = match self.folder() {
            Some(folder) => folder.place(path),
            None => store::place(path, &self.paths.dir),
        };
        self.places.borrow_mut().insert(path.to_path_buf(), place);
        place
    }

    /// What stands at `path` itself (a symlink reported, not followed), looked at once; `None`
    /// when the look failed.
    pub fn entry(&self, path: &Path) -> Option<Entry> {
        if let Some(entry) = self.entries.borrow().get(path) {
            return *entry;
        }
        let entry = store::entry(path, &self.paths.dir).ok();
        self.entries.borrow_mut().insert(path.to_path_buf(), entry);
        entry
    }

    /// The names in the folder `path` of the plan, with what each is, listed once.
    pub fn list(&self, path: &Path) -> Listing {
        if let Some(listed) = self.listings.borrow().get(path) {
            return Rc::clone(listed);
        }
        let listed = Rc::new(store::list_entries(path, &self.paths.dir));
        self.listings
            .borrow_mut()
            .insert(path.to_path_buf(), Rc::clone(&listed));
        listed
    }

    /// Whether `path` leads to a folder (through symlinks too).
    pub fn is_folder(&self, path: &Path) -> bool {
        store::is_folder(path)
    }

    /// Who holds the plan's writer lock (`state.json.lock`), when it is held and can be read.
    pub fn lock_holder(&self) -> Option<store::lock_dir::LockInfo> {
        store::lock_dir::inspect(&self.paths.state).ok().flatten()
    }

    /// The record of an interrupted multi-file write, if there is one (`store::intent`).
    pub fn pending_intent(&self) -> crate::Result<Option<store::intent::Intent>> {
        store::intent::pending(&self.paths.dir)
    }

    /// Whether the plan has neither manifest.json nor state.json (nothing at either name, not
    /// even a symlink): a plan without a state layer, judged and shown from its markdown.
    pub fn has_no_state_layer(&self) -> bool {
        [&self.paths.manifest, &self.paths.state]
            .iter()
            .all(|path| self.entry(path) == Some(Entry::Missing))
    }

    /// Whether the plan folder is inside a git work tree: it or an ancestor holds `.git` (a
    /// folder, or the file a linked worktree or submodule has).
    pub fn in_git_work_tree(&self) -> bool {
        *self
            .in_git
            .get_or_init(|| store::in_git_work_tree(&self.paths.dir))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_folder() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("README.md"),
            "# Plan\n\n- [ ] Task 1: One\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("PROGRESS.md"), "# Progress\n").unwrap();
        dir
    }

    /// A file is read once per command: a later read gets the bytes of the first, even when the
    /// file changed on disk meanwhile (what the checks judged is what the command digests).
    #[test]
    fn a_file_is_read_once_and_kept() {
        let dir = plan_folder();
        let plan = LoadedPlan::open(dir.path());
        let progress = dir.path().join("PROGRESS.md");
        let first = plan.read(&progress);
        std::fs::write(&progress, "# Progress\n- edited\n").unwrap();
        let second = plan.read(&progress);
        assert!(Rc::ptr_eq(&first, &second));
        assert_eq!(second.as_ref().as_ref().unwrap(), b"# Progress\n");
        assert_eq!(plan.readme_text().unwrap(), "# Plan\n\n- [ ] Task 1: One\n");
    }

    /// A file a change sets is what the plan judges from then on (its README parsed again), and
    /// what it held before is what the change's preview starts from.
    #[test]
    fn a_file_set_by_a_change_is_judged_and_its_original_previewed() {
        let dir = plan_folder();
        let mut plan = LoadedPlan::open(dir.path());
        let readme = dir.path().join("README.md");
        assert!(!plan.readme().unwrap().index[0].marker.is_done());
        plan.set_file(&readme, b"# Plan\n\n- [x] Task 1: One\n".to_vec());
        assert!(plan.readme().unwrap().index[0].marker.is_done());
        assert_eq!(
            plan.current_bytes(&readme).unwrap().unwrap(),
            b"# Plan\n\n- [ ] Task 1: One\n"
        );
        assert_eq!(
            std::fs::read(&readme).unwrap(),
            b"# Plan\n\n- [ ] Task 1: One\n",
            "nothing is written"
        );
    }
}
