//! Retention end to end in a temporary home: `leastgrant schedule` shows, writes (once) and
//! removes a systemd user timer, a launchd agent and a crontab line, leaving every foreign file
//! and line as it is; `doctor` warns when an agent will delete history `ingest` has not read.
//!
//! No real scheduler runs: `PATH` leads with stand-ins for `systemctl` and `crontab`
//! (`tests/data/schedule/`) that record their arguments under the temporary home, and launchd is
//! written with `--no-activate`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, SystemTime};

use serde_json::Value;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

/// A temporary root with `home/`, `proj/` and `bin/` (holding the stand-ins named).
fn sandbox(name: &str, stand_ins: &[(&str, &str)]) -> PathBuf {
    let root = std::env::temp_dir().join(format!(
        "leastgrant-e2e-retention-{name}-{}",
        std::process::id()
    ));
    let _ = fs::remove_dir_all(&root);
    fs::create_dir_all(root.join("home")).unwrap();
    fs::create_dir_all(root.join("proj")).unwrap();
    fs::create_dir_all(root.join("bin")).unwrap();
    for (name, fixture) in stand_ins {
        let path = root.join("bin").join(name);
        fs::copy(format!("{DATA}/{fixture}"), &path).unwrap();
        set_mode(&path, 0o755);
    }
    root
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

fn mode_of(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// `leastgrant args…` in `root/proj` with `HOME=root/home`, `LEASTGRANT_HOME=root/state` and the
/// stand-ins first on `PATH`.
fn leastgrant(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_leastgrant"))
        .env("HOME", root.join("home"))
        .env("LEASTGRANT_HOME", root.join("state"))
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", root.join("bin").display()),
        )
        .env("USER", "dev")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .current_dir(root.join("proj"))
        .args(args)
        .output()
        .expect("leastgrant runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn succeeded(output: Output) -> String {
    assert_eq!(
        output.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        stdout(&output),
        String::from_utf8_lossy(&output.stderr)
    );
    stdout(&output)
}

/// A fixture with the binary and the state directory put in.
fn expected(root: &Path, fixture: &str) -> String {
    let program = fs::canonicalize(env!("CARGO_BIN_EXE_leastgrant")).unwrap();
    fs::read_to_string(format!("{DATA}/schedule/{fixture}"))
        .unwrap()
        .replace("@PROGRAM@", &program.display().to_string())
        .replace("@STATE@", &root.join("state").display().to_string())
}

fn log_of(root: &Path, name: &str) -> String {
    fs::read_to_string(root.join("home").join(name)).unwrap_or_default()
}

fn modified(path: &Path) -> SystemTime {
    fs::metadata(path).unwrap().modified().unwrap()
}

#[test]
fn systemd_timer_is_shown_then_written_once_and_removed() {
    let root = sandbox("systemd", &[("systemctl", "schedule/systemctl")]);
    let units = root.join("home/.config/systemd/user");
    let service = units.join("leastgrant-ingest.service");
    let timer = units.join("leastgrant-ingest.timer");

    // Shown, not written; `systemctl --user` answers, so systemd is chosen.
    let shown = succeeded(leastgrant(&root, &["schedule"]));
    assert!(shown.contains("systemd user timer; would write"), "{shown}");
    let program = fs::canonicalize(env!("CARGO_BIN_EXE_leastgrant")).unwrap();
    let exec = format!("ExecStart={} ingest --keep-deleted", program.display());
    assert!(shown.contains(&exec), "{shown}");
    assert!(!units.exists(), "showing wrote something");
    assert_eq!(log_of(&root, "systemctl.log"), "--user show-environment\n");

    let written = succeeded(leastgrant(&root, &["schedule", "--write"]));
    assert!(written.contains("writing:"), "{written}");
    assert_eq!(
        fs::read_to_string(&service).unwrap(),
        expected(&root, "leastgrant-ingest.service")
    );
    assert_eq!(
        fs::read_to_string(&timer).unwrap(),
        expected(&root, "leastgrant-ingest.timer")
    );
    assert_eq!(mode_of(&service), 0o600);
    assert_eq!(mode_of(&timer), 0o600);
    assert_eq!(mode_of(&units), 0o700);
    assert!(
        log_of(&root, "systemctl.log")
            .ends_with("--user daemon-reload\n--user enable --now leastgrant-ingest.timer\n"),
        "{}",
        log_of(&root, "systemctl.log")
    );

    // Again: nothing is rewritten.
    let before = (modified(&service), modified(&timer));
    let again = succeeded(leastgrant(&root, &["schedule", "--write"]));
    assert!(again.contains("is installed, unchanged"), "{again}");
    assert_eq!((modified(&service), modified(&timer)), before);

    let removed = succeeded(leastgrant(&root, &["schedule", "--remove"]));
    assert!(removed.contains("removed"), "{removed}");
    assert!(!service.exists() && !timer.exists());
    assert!(
        log_of(&root, "systemctl.log").contains("--user disable --now leastgrant-ingest.timer\n")
    );
    let nothing = succeeded(leastgrant(&root, &["schedule", "--remove"]));
    assert!(
        nothing.contains("no systemd user timer of leastgrant's"),
        "{nothing}"
    );
}

#[test]
fn a_foreign_unit_is_left_as_it_is() {
    let root = sandbox("foreign", &[("systemctl", "schedule/systemctl")]);
    let timer = root.join("home/.config/systemd/user/leastgrant-ingest.timer");
    fs::create_dir_all(timer.parent().unwrap()).unwrap();
    fs::write(&timer, "[Timer]\nOnCalendar=weekly\n").unwrap();
    let out = leastgrant(&root, &["schedule", "--with", "systemd", "--write"]);
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("was not written by `leastgrant schedule`")
    );
    assert_eq!(
        fs::read_to_string(&timer).unwrap(),
        "[Timer]\nOnCalendar=weekly\n"
    );
    assert!(!timer.with_extension("service").exists());
    let removed = succeeded(leastgrant(
        &root,
        &["schedule", "--with", "systemd", "--remove"],
    ));
    assert!(removed.contains("left as it is"), "{removed}");
    assert!(timer.exists());
    assert!(!log_of(&root, "systemctl.log").contains("enable"));
}

#[test]
fn launchd_agent_is_written_with_the_state_directory_carried() {
    let root = sandbox("launchd", &[]);
    let plist = root.join("home/Library/LaunchAgents/dev.leastgrant.ingest.plist");
    let args = [
        "schedule",
        "--with",
        "launchd",
        "--every",
        "hourly",
        "--write",
        "--no-activate",
    ];
    let written = succeeded(leastgrant(&root, &args));
    assert!(
        written.contains("not activated (--no-activate)"),
        "{written}"
    );
    assert_eq!(
        fs::read_to_string(&plist).unwrap(),
        expected(&root, "dev.leastgrant.ingest.plist")
    );
    assert_eq!(mode_of(&plist), 0o600);
    let before = modified(&plist);
    assert!(succeeded(leastgrant(&root, &args)).contains("unchanged"));
    assert_eq!(modified(&plist), before);
    // doctor reads the program back from the plist.
    place(
        "retention/claude-session.jsonl",
        &root.join("home/.claude/projects/-p/s.jsonl"),
        1,
    );
    let report = doctor(&root);
    assert!(
        report.contains("a periodic ingest runs (launchd agent"),
        "{report}"
    );
    let program = fs::canonicalize(env!("CARGO_BIN_EXE_leastgrant")).unwrap();
    let text = fs::read_to_string(&plist).unwrap();
    fs::write(
        &plist,
        text.replace(&program.display().to_string(), "/gone/leastgrant"),
    )
    .unwrap();
    let report = doctor(&root);
    assert!(
        report.contains("runs /gone/leastgrant, which does not exist"),
        "{report}"
    );
    fs::write(&plist, text).unwrap();
    let remove = ["schedule", "--with", "launchd", "--remove", "--no-activate"];
    succeeded(leastgrant(&root, &remove));
    assert!(!plist.exists());
}

#[test]
fn cron_line_is_added_once_and_removed_keeping_every_other_line() {
    // `systemctl --user` does not answer here: cron is chosen.
    let root = sandbox("cron", &[("crontab", "schedule/crontab-command")]);
    fs::write(root.join("bin/systemctl"), "#!/bin/sh\nexit 1\n").unwrap();
    set_mode(&root.join("bin/systemctl"), 0o755);
    let crontab = root.join("home/crontab.txt");
    let original = fs::read_to_string(format!("{DATA}/schedule/crontab")).unwrap();
    fs::write(&crontab, &original).unwrap();

    let shown = succeeded(leastgrant(&root, &["schedule"]));
    assert!(shown.contains("would add this line"), "{shown}");
    assert_eq!(fs::read_to_string(&crontab).unwrap(), original);

    succeeded(leastgrant(&root, &["schedule", "--write"]));
    let program = fs::canonicalize(env!("CARGO_BIN_EXE_leastgrant")).unwrap();
    let line = format!(
        "17 3 * * * LEASTGRANT_HOME={} {} ingest --keep-deleted >/dev/null # leastgrant schedule\n",
        root.join("state").display(),
        program.display()
    );
    assert_eq!(
        fs::read_to_string(&crontab).unwrap(),
        format!("{original}{line}")
    );
    let writes = |root: &Path| log_of(root, "crontab.log").matches("-\n").count();
    assert_eq!(writes(&root), 1);
    assert!(succeeded(leastgrant(&root, &["schedule", "--write"])).contains("unchanged"));
    assert_eq!(writes(&root), 1, "a second --write rewrote the crontab");

    // doctor finds the line, and the binary it runs.
    place(
        "retention/claude-session.jsonl",
        &root.join("home/.claude/projects/-p/s.jsonl"),
        1,
    );
    let report = doctor(&root);
    assert!(
        report.contains("a periodic ingest runs (crontab line)"),
        "{report}"
    );
    let installed = fs::read_to_string(&crontab).unwrap();
    fs::write(
        &crontab,
        installed.replace(&program.display().to_string(), "/gone/leastgrant"),
    )
    .unwrap();
    let report = doctor(&root);
    assert!(
        report.contains("runs /gone/leastgrant, which does not exist"),
        "{report}"
    );
    fs::write(&crontab, installed).unwrap();

    succeeded(leastgrant(&root, &["schedule", "--remove"]));
    assert_eq!(fs::read_to_string(&crontab).unwrap(), original);
}

/// The retention checks of `doctor --json`, as `id: status: text` lines.
fn doctor(root: &Path) -> String {
    let out = leastgrant(root, &["doctor", "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["id"].as_str().unwrap().starts_with("retention."))
        .map(|c| format!("{}: {}: {}\n", c["id"], c["status"], c["text"]))
        .collect()
}

/// Places a fixture at `dest`, last written `days` ago.
fn place(fixture: &str, dest: &Path, days: u64) {
    fs::create_dir_all(dest.parent().unwrap()).unwrap();
    fs::copy(format!("{DATA}/{fixture}"), dest).unwrap();
    let when = SystemTime::now() - Duration::from_secs(days * 86_400);
    fs::File::options()
        .write(true)
        .open(dest)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

#[test]
fn doctor_warns_about_history_deleted_before_it_is_read() {
    let root = sandbox("doctor", &[("systemctl", "schedule/systemctl")]);
    let home = root.join("home");
    let transcript = home.join(".claude/projects/-home-dev-proj/s1.jsonl");
    place("retention/claude-session.jsonl", &transcript, 29);

    // 29 days old, not in the table, Claude Code keeps 30: deleted within a day.
    let report = doctor(&root);
    assert!(
        report.contains("\"retention.claude-code\": \"warn\""),
        "{report}"
    );
    assert!(
        report.contains(&transcript.display().to_string()),
        "{report}"
    );
    assert!(
        report.contains("cleanupPeriodDays not set: the default"),
        "{report}"
    );
    assert!(report.contains("no periodic ingest"), "{report}");

    // Read into the table under the default --out: nothing left to lose.
    succeeded(leastgrant(&root, &["ingest", "--keep-deleted"]));
    let report = doctor(&root);
    assert!(
        report.contains("\"retention.claude-code\": \"ok\""),
        "{report}"
    );
    assert!(report.contains("all 1 file(s) read"), "{report}");

    // Written again after the ingest (a resumed session): unread once more.
    let mut file = fs::File::options().append(true).open(&transcript).unwrap();
    std::io::Write::write_all(&mut file, b"\n").unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(28 * 86_400))
        .unwrap();
    let report = doctor(&root);
    assert!(
        report.contains("\"retention.claude-code\": \"warn\""),
        "{report}"
    );

    // The user keeps 90 days: 28 days old is far from deletion.
    place(
        "retention/claude-settings-90-days.json",
        &home.join(".claude/settings.json"),
        0,
    );
    let report = doctor(&root);
    assert!(
        report.contains("\"retention.claude-code\": \"ok\""),
        "{report}"
    );
    assert!(
        report.contains("keeps 90 days (cleanupPeriodDays = 90 in"),
        "{report}"
    );
    assert!(
        report.contains("1 of 1 file(s) not read yet, none near deletion"),
        "{report}"
    );

    // 85 of 90 days: a week's margin without a periodic ingest, a day and an hour with one.
    place("retention/claude-session.jsonl", &transcript, 85);
    assert!(doctor(&root).contains("\"retention.claude-code\": \"warn\""));
    succeeded(leastgrant(
        &root,
        &["schedule", "--with", "systemd", "--write"],
    ));
    let report = doctor(&root);
    assert!(
        report.contains("\"retention.claude-code\": \"ok\""),
        "{report}"
    );
    assert!(
        report.contains("a periodic ingest runs (systemd user timer"),
        "{report}"
    );

    // The binary the timer runs was moved away: the timer runs nothing.
    let service = home.join(".config/systemd/user/leastgrant-ingest.service");
    let program = fs::canonicalize(env!("CARGO_BIN_EXE_leastgrant")).unwrap();
    let text = fs::read_to_string(&service).unwrap();
    fs::write(
        &service,
        text.replace(&program.display().to_string(), "/gone/leastgrant"),
    )
    .unwrap();
    let report = doctor(&root);
    assert!(
        report.contains("\"retention.claude-code\": \"warn\""),
        "{report}"
    );
    assert!(
        report.contains("runs /gone/leastgrant, which does not exist"),
        "{report}"
    );
}

#[test]
fn doctor_reads_gemini_cli_retention() {
    let root = sandbox("doctor-gemini", &[]);
    let home = root.join("home");
    let chat = home.join(".gemini/tmp/f00d/chats/session-1.jsonl");
    place("retention/gemini-chat.jsonl", &chat, 3);
    // The default (30 days) is far.
    assert!(doctor(&root).contains("\"retention.gemini\": \"ok\""));
    // maxAge 2d: already due; the same written with comments and trailing commas, as Gemini
    // CLI reads its settings.
    let settings = home.join(".gemini/settings.json");
    for fixture in [
        "retention/gemini-settings-2-days.json",
        "retention/gemini-settings-2-days-comments.json",
    ] {
        place(fixture, &settings, 0);
        let report = doctor(&root);
        assert!(
            report.contains("\"retention.gemini\": \"warn\""),
            "{fixture}: {report}"
        );
        assert!(
            report.contains("deleted the next time Gemini CLI starts"),
            "{fixture}: {report}"
        );
        assert!(
            report.contains("sessionRetention.maxAge = 2d"),
            "{fixture}: {report}"
        );
    }
    // Retention off: kept.
    place("retention/gemini-settings-off.json", &settings, 0);
    let report = doctor(&root);
    assert!(report.contains("\"retention.gemini\": \"ok\""), "{report}");
    assert!(report.contains("retention is off"), "{report}");
}
