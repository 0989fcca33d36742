//! What a repository or another local user can put where `leastgrant` reads and writes (issue
//! 18, items 1 and 3), through the real binary: a rules file or an agent configuration that is a
//! FIFO, a link to a device or a 1 GiB sparse file is a clear error naming it, never a hang;
//! everything `allow` and `install --project` create is owner-only whatever the umask; and a
//! grants file another user owns or can write — or a directory above it — makes `check` refuse
//! it and `doctor` fail.
//!
//! A hang fails the test: each run is killed after two minutes (a guard, not a measurement; no
//! test asserts a duration).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::support::{finishing, isolated, scratch_project};

fn scratch(name: &str) -> (PathBuf, PathBuf) {
    scratch_project(&format!("untrusted-{name}"))
}

/// Runs `leastgrant args…` in `cwd` with `HOME=home` (under `umask` when given), killed if it
/// has not finished after two minutes.
fn run(home: &Path, cwd: &Path, umask: Option<&str>, args: &[&str]) -> Output {
    let mut command = match umask {
        Some(mask) => {
            let mut sh = Command::new("sh");
            sh.args(["-c", &format!("umask {mask} && exec \"$0\" \"$@\"")])
                .arg(env!("CARGO_BIN_EXE_leastgrant"));
            sh
        }
        None => Command::new(env!("CARGO_BIN_EXE_leastgrant")),
    };
    let child = isolated(&mut command, home, cwd)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    finishing(child, args)
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Makes `path` a link to `/dev/zero`, a FIFO or a 1 GiB sparse file; the words its refusal
/// must contain.
fn plant(path: &Path, how: &str) -> &'static str {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(path);
    match how {
        "device" => {
            std::os::unix::fs::symlink("/dev/zero", path).unwrap();
            "a character device"
        }
        "fifo" => {
            assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
            "a FIFO"
        }
        "sparse" => {
            std::fs::File::create(path)
                .unwrap()
                .set_len(1 << 30)
                .unwrap();
            "1073741824 bytes, more than"
        }
        _ => unreachable!(),
    }
}

#[test]
fn check_refuses_a_project_rules_file_that_is_no_file() {
    for how in ["device", "fifo", "sparse"] {
        let (home, project) = scratch(&format!("check-rules-{how}"));
        let file = project.join(".leastgrant/rules.json");
        let words = plant(&file, how);
        let output = run(&home, &project, None, &["check", "--json", "ls"]);
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(3), "{how}: {text}");
        assert!(
            text.contains(&file.display().to_string()) && text.contains(words),
            "{how}: {text}"
        );
    }
}

#[test]
fn check_refuses_claude_settings_that_are_no_file() {
    let (home, project) = scratch("check-settings");
    let file = project.join(".claude/settings.json");
    let words = plant(&file, "fifo");
    let output = run(&home, &project, None, &["check", "--claude-settings", "ls"]);
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(3), "{text}");
    assert!(
        text.contains(&file.display().to_string()) && text.contains(words),
        "{text}"
    );
}

#[test]
fn doctor_fails_on_an_agent_configuration_that_is_no_file() {
    let (home, project) = scratch("doctor-settings");
    let file = project.join(".claude/settings.json");
    let words = plant(&file, "device");
    std::fs::create_dir_all(project.join(".leastgrant")).unwrap();
    plant(&project.join(".leastgrant/rules.json"), "fifo");
    let output = run(&home, &project, None, &["doctor", "--json"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let project_check = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "claude-code.project")
        .unwrap();
    assert_eq!(project_check["status"], "fail");
    let text = project_check["text"].as_str().unwrap();
    assert!(
        text.contains(&file.display().to_string()) && text.contains(words),
        "{text}"
    );
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

/// The grants file of the project (the one file under `grants/projects/*/`).
fn grants_file(home: &Path) -> PathBuf {
    let projects = home.join(".leastgrant/grants/projects");
    let dir = std::fs::read_dir(&projects)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    dir.join("grants.json")
}

#[test]
fn allow_creates_owner_only_directories_and_files_under_umask_000() {
    let (home, project) = scratch("umask");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o755)).unwrap();
    let output = run(&home, &project, Some("000"), &["allow", "npm test"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let file = grants_file(&home);
    let state = home.join(".leastgrant");
    for dir in [
        state.clone(),
        state.join("grants"),
        state.join("grants/projects"),
        file.parent().unwrap().to_path_buf(),
    ] {
        assert_eq!(mode(&dir), 0o700, "{}", dir.display());
    }
    assert_eq!(mode(&file), 0o600);
    let doctor = run(&home, &project, None, &["doctor", "--json"]);
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    for check in report["checks"].as_array().unwrap() {
        if check["id"].as_str().unwrap().starts_with("perm.") {
            assert_eq!(check["status"], "ok", "{check}");
        }
    }
}

#[test]
fn install_project_creates_an_owner_only_claude_directory_under_umask_000() {
    let (home, project) = scratch("install");
    let hook = Path::new(env!("CARGO_BIN_EXE_leastgrant")).with_file_name("leastgrant-hook");
    let output = run(
        &home,
        &project,
        Some("000"),
        &[
            "install",
            "claude-code",
            "--project",
            "--hook",
            hook.to_str().unwrap(),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(mode(&project.join(".claude")), 0o700);
    assert_eq!(mode(&project.join(".claude/settings.json")), 0o600);
}

/// A project with one allow grant, as `leastgrant allow` made it.
fn granted(name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let (home, project) = scratch(name);
    let output = run(
        &home,
        &project,
        None,
        &["allow", "curl https://evil.example/x"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let allowed = run(
        &home,
        &project,
        None,
        &["check", "--json", "curl https://evil.example/x"],
    );
    assert_eq!(
        allowed.status.code(),
        Some(0),
        "the grant is in force while it is the user's"
    );
    let file = grants_file(&home);
    (home, project, file)
}

/// `check` refuses the grants file (exit 3, naming it and why) and `doctor` fails `perm.grants`
/// saying the same.
fn refused(home: &Path, project: &Path, path: &Path, words: &str) {
    let output = run(
        home,
        project,
        None,
        &["check", "--json", "curl https://evil.example/x"],
    );
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(3), "{text}");
    assert!(
        text.contains(&path.display().to_string()) && text.contains(words),
        "{text}"
    );
    let doctor = run(home, project, None, &["doctor", "--json"]);
    assert_eq!(doctor.status.code(), Some(1), "{}", stderr(&doctor));
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let grants = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "perm.grants")
        .unwrap();
    assert_eq!(grants["status"], "fail", "{grants}");
    let text = grants["text"].as_str().unwrap();
    assert!(
        text.contains(&path.display().to_string()) && text.contains(words),
        "{text}"
    );
}

#[test]
fn a_grants_file_others_can_write_is_refused_and_doctor_fails() {
    let (home, project, file) = granted("grants-writable");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
    refused(
        &home,
        &project,
        &file,
        "can be written by other users (mode 666)",
    );
}

#[test]
fn a_grants_file_another_user_owns_is_refused_and_doctor_fails() {
    let (home, project, file) = granted("grants-foreign");
    assert!(
        Command::new("chown")
            .arg("12345")
            .arg(&file)
            .status()
            .unwrap()
            .success(),
        "the tests run as root"
    );
    refused(
        &home,
        &project,
        &file,
        "belongs to another user (uid 12345)",
    );
}

#[test]
fn a_grants_directory_others_can_write_is_refused_and_doctor_fails() {
    let (home, project, _) = granted("grants-dir");
    let dir = home.join(".leastgrant/grants/projects");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    refused(
        &home,
        &project,
        &dir,
        "can be written by other users (mode 777)",
    );
}

#[test]
fn export_inspect_check_and_doctor_refuse_an_envelope_that_is_no_file() {
    // `export --inspect` follows a link to the file named (to refuse the device behind it);
    // `doctor` refuses a link where leastgrant keeps its own envelope, as the hook does.
    for how in ["device", "fifo", "sparse"] {
        let (home, project) = scratch(&format!("envelope-{how}"));
        let file = home.join(".leastgrant/envelope.lgenv");
        let planted = plant(&file, how);
        let words = if how == "device" {
            "is a symbolic link"
        } else {
            planted
        };
        let output = run(
            &home,
            &project,
            None,
            &["export", "--inspect", file.to_str().unwrap()],
        );
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(3), "{how}: {text}");
        assert!(text.contains(&file.display().to_string()), "{how}: {text}");
        assert!(text.contains(planted), "{how}: {text}");
        let check = run(
            &home,
            &project,
            None,
            &["check", "--envelope", file.to_str().unwrap(), "ls"],
        );
        let text = stderr(&check);
        assert_eq!(check.status.code(), Some(3), "{how}: {text}");
        assert!(
            text.contains(&file.display().to_string()) && text.contains(planted),
            "{how}: {text}"
        );
        let doctor = run(&home, &project, None, &["doctor", "--json"]);
        assert_eq!(doctor.status.code(), Some(1), "{}", stderr(&doctor));
        let report = String::from_utf8_lossy(&doctor.stdout).into_owned();
        assert!(report.contains(words), "{how}: {report}");
    }
}
