//! The file grant store on a real file system: upserts, revoke, clear, a missing ledger, owner-
//! only permissions, and what a crash between staging and renaming leaves behind.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use leastgrant_engine::{Grant, GrantScope, GrantStore, GrantVerdict};
use leastgrant_hook::grants::FileGrantStore;
use serde_json::json;

fn temp_root(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("leastgrant-grants-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn mode(path: &std::path::Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn read_grant() -> Grant {
    Grant::new(
        "Read",
        GrantVerdict::Allow,
        GrantScope::ThisCall {
            args: json!({"file_path": "/p/README.md"}),
        },
    )
}

#[test]
fn a_missing_ledger_reads_as_empty() {
    let store = FileGrantStore::new(&temp_root("missing"), "/home/dev/proj");
    assert!(store.load().unwrap().is_empty());
}

#[test]
fn save_upserts_by_identity_and_revoke_returns_the_record() {
    let root = temp_root("upsert");
    let mut store = FileGrantStore::new(&root, "/home/dev/proj");
    let first = store.save(read_grant().with_note("first")).unwrap();
    let again = store.save(read_grant().with_note("second")).unwrap();
    assert_eq!(first.id(), again.id());
    let loaded = store.load().unwrap();
    assert_eq!(loaded.len(), 1, "re-granting upserts");
    assert_eq!(loaded[0].note.as_deref(), Some("second"));
    let deny = store
        .save(Grant::new(
            "Bash",
            GrantVerdict::Deny,
            GrantScope::ThisAction {
                spelling: "curl https://evil.example".into(),
            },
        ))
        .unwrap();
    assert_eq!(store.load().unwrap().len(), 2);
    let revoked = store.revoke(deny.id()).unwrap().expect("the audit record");
    assert_eq!(revoked, deny);
    assert_eq!(store.revoke(deny.id()).unwrap(), None);
    store.clear().unwrap();
    assert!(store.load().unwrap().is_empty());
}

#[test]
fn projects_are_kept_apart() {
    let root = temp_root("apart");
    let mut a = FileGrantStore::new(&root, "/home/dev/a");
    let b = FileGrantStore::new(&root, "/home/dev/b");
    a.save(read_grant()).unwrap();
    assert!(b.load().unwrap().is_empty());
    assert_ne!(a.path(), b.path());
    let digest = a
        .path()
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_eq!(digest.len(), 16);
    assert!(a.path().starts_with(root.join("projects")));
}

#[test]
fn files_are_owner_only() {
    let root = temp_root("modes");
    let mut store = FileGrantStore::new(&root, "/home/dev/proj");
    store.save(read_grant()).unwrap();
    assert_eq!(mode(&store.path()), 0o600);
    assert_eq!(mode(store.path().parent().unwrap()), 0o700);
}

#[test]
fn a_crash_between_stage_and_rename_leaves_the_old_file_and_nothing_wide() {
    let root = temp_root("crash");
    let mut store = FileGrantStore::new(&root, "/home/dev/proj");
    store.save(read_grant()).unwrap();
    let before = fs::read_to_string(store.path()).unwrap();
    // A crash left a wide staged file behind.
    fs::write(store.staged_path(), "garbage").unwrap();
    fs::set_permissions(store.staged_path(), fs::Permissions::from_mode(0o644)).unwrap();
    // The next write stops where a crash would: staged, not renamed.
    let staged = store.stage(&[]).unwrap();
    assert_eq!(
        mode(&staged),
        0o600,
        "the staged file's mode is reset on open"
    );
    assert_eq!(
        fs::read_to_string(store.path()).unwrap(),
        before,
        "the old file is intact"
    );
    assert_eq!(store.load().unwrap().len(), 1);
    // A full write then replaces it.
    store.clear().unwrap();
    assert!(store.load().unwrap().is_empty());
    assert!(!store.staged_path().exists(), "nothing is left staged");
}

#[test]
fn a_hand_edited_or_corrupt_file_is_a_clear_error() {
    let root = temp_root("corrupt");
    let mut store = FileGrantStore::new(&root, "/home/dev/proj");
    store.save(read_grant()).unwrap();
    let text = fs::read_to_string(store.path())
        .unwrap()
        .replace("README.md", "secrets.env");
    fs::write(store.path(), text).unwrap();
    let error = store.load().unwrap_err().to_string();
    assert!(error.contains("does not match its content"), "{error}");
    fs::write(store.path(), "{not json").unwrap();
    let error = store.load().unwrap_err().to_string();
    assert!(error.contains("not valid JSON"), "{error}");
}

#[test]
fn the_store_is_object_safe() {
    let root = temp_root("dyn");
    let mut store: Box<dyn GrantStore> = Box::new(FileGrantStore::new(&root, "/p"));
    store.save(read_grant()).unwrap();
    assert_eq!(store.load().unwrap().len(), 1);
}

#[test]
fn a_planted_symlink_is_never_followed() {
    let root = temp_root("symlink");
    let mut store = FileGrantStore::new(&root, "/home/dev/proj");
    store.save(read_grant()).unwrap();
    let victim = root.join("victim");
    fs::write(&victim, "precious").unwrap();
    std::os::unix::fs::symlink(&victim, store.staged_path()).unwrap();
    store
        .save(Grant::new(
            "WebSearch",
            GrantVerdict::Deny,
            GrantScope::ThisTool,
        ))
        .unwrap();
    assert_eq!(
        fs::read_to_string(&victim).unwrap(),
        "precious",
        "the symlink's target is untouched"
    );
    assert!(
        fs::symlink_metadata(store.path())
            .unwrap()
            .file_type()
            .is_file()
    );
    assert_eq!(store.load().unwrap().len(), 2);
}

#[test]
fn a_grants_file_others_can_write_or_a_symlink_is_refused() {
    let root = temp_root("trust");
    let mut store = FileGrantStore::new(&root, "/home/dev/proj");
    store.save(read_grant()).unwrap();
    fs::set_permissions(store.path(), fs::Permissions::from_mode(0o666)).unwrap();
    assert!(
        store
            .load()
            .unwrap_err()
            .to_string()
            .contains("can be written by other users (mode 666)")
    );
    fs::remove_file(store.path()).unwrap();
    let elsewhere = root.join("elsewhere.json");
    fs::write(&elsewhere, r#"{"version": 1, "grants": []}"#).unwrap();
    std::os::unix::fs::symlink(&elsewhere, store.path()).unwrap();
    assert!(
        store
            .load()
            .unwrap_err()
            .to_string()
            .contains("is a symbolic link")
    );
}
