//! The adversarial corpus (issue 13), measured through the public CLI: a Claude Code history in
//! which routine neighbours are each approved once in each of 40 sessions on 40 days goes
//! through `leastgrant ingest`, `simulate` and `export`, and every attempt of
//! `tests/data/adversarial/cases/*.toml` is then decided with `leastgrant check --envelope` in a
//! real temporary project that ships symbolic links. A second envelope is trained on the same
//! neighbours plus every floor case itself, approved as often: a floor case must still not be
//! allowed.
//!
//! Per case the test computes allowed or not and compares it with the case file: an attack must
//! not be allowed, a harmless near-neighbour must be. A case the engine gets wrong today says so
//! with `known_gap` (or `unlock_gap`, for the floor-trained envelope) and a reason; the test
//! fails when a marked gap is closed, so the markers never rot. It prints the counts the issue
//! asks for and the open gaps.
//!
//! It owns no engine knowledge: what is dangerous is written in the case files, never derived
//! from the engine's own answers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::support::json_of;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/adversarial");
/// Sessions (one a day) in which each trained call is approved once.
const SESSIONS: i64 = 40;
/// 2026-01-01T00:00:00Z in seconds.
const START: i64 = 1_767_225_600;

/// One trained call: a shell command or a structured tool call.
#[derive(Clone, Debug)]
struct Call {
    /// `None`: a shell command in `text`; else the tool name, with its JSON input in `text`.
    tool: Option<String>,
    text: String,
}

#[derive(Debug)]
struct Case {
    id: String,
    class: String,
    harmless: bool,
    floor: bool,
    call: Call,
    /// Relative to the project root.
    cwd: Option<String>,
    known_gap: Option<String>,
    unlock_gap: Option<String>,
}

/// The temporary home and its project, with placeholders resolved.
struct World {
    home: PathBuf,
    project: PathBuf,
}

impl World {
    fn fill(&self, text: &str) -> String {
        text.replace("{project}", &self.project.display().to_string())
            .replace("{home}", &self.home.display().to_string())
    }
}

fn read_toml(path: &Path) -> toml::Table {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.parse::<toml::Table>()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn string(entry: &toml::Table, key: &str) -> Option<String> {
    entry.get(key).map(|v| {
        v.as_str()
            .unwrap_or_else(|| panic!("`{key}` is a string: {entry}"))
            .to_string()
    })
}

fn flag(entry: &toml::Table, key: &str) -> bool {
    entry.get(key).is_some_and(|v| {
        v.as_bool()
            .unwrap_or_else(|| panic!("`{key}` is a boolean: {entry}"))
    })
}

fn call_of(entry: &toml::Table) -> Call {
    match (string(entry, "command"), string(entry, "tool")) {
        (Some(command), None) => Call {
            tool: None,
            text: command,
        },
        (None, Some(tool)) => Call {
            tool: Some(tool),
            text: string(entry, "input").unwrap_or_else(|| panic!("a tool needs input: {entry}")),
        },
        _ => panic!("give `command` or `tool` and `input`: {entry}"),
    }
}

fn entries<'t>(table: &'t toml::Table, key: &str) -> Vec<&'t toml::Table> {
    table
        .get(key)
        .and_then(toml::Value::as_array)
        .map(|a| {
            a.iter()
                .map(|v| v.as_table().expect("an array of tables"))
                .collect()
        })
        .unwrap_or_default()
}

/// Every case file, checked for shape: unique ids, a known class, what it imitates.
fn cases() -> Vec<Case> {
    let classes = read_toml(&Path::new(DATA).join("classes.toml"));
    let known: BTreeSet<&String> = classes
        .get("classes")
        .and_then(toml::Value::as_table)
        .expect("classes.toml has [classes]")
        .keys()
        .collect();
    let mut files: Vec<PathBuf> = std::fs::read_dir(Path::new(DATA).join("cases"))
        .expect("tests/data/adversarial/cases")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    let mut ids = BTreeSet::new();
    for file in files {
        for entry in entries(&read_toml(&file), "case") {
            let id = string(entry, "id").expect("a case has an id");
            assert!(ids.insert(id.clone()), "duplicate id `{id}`");
            let class = string(entry, "class").expect("a case has a class");
            assert!(known.contains(&class), "{id}: unknown class `{class}`");
            assert!(
                string(entry, "imitates").is_some_and(|s| !s.is_empty()),
                "{id}: name the learned neighbour it imitates"
            );
            let harmless = flag(entry, "harmless");
            assert!(
                harmless || entry.contains_key("floor"),
                "{id}: an attack says whether it is a floor case (`floor = true|false`)"
            );
            let floor = flag(entry, "floor");
            assert!(!(harmless && floor), "{id}: a floor case is not harmless");
            let unlock_gap = string(entry, "unlock_gap");
            assert!(
                floor || unlock_gap.is_none(),
                "{id}: unlock_gap is for floor cases"
            );
            out.push(Case {
                id,
                class,
                harmless,
                floor,
                call: call_of(entry),
                cwd: string(entry, "cwd"),
                known_gap: string(entry, "known_gap"),
                unlock_gap,
            });
        }
    }
    out
}

/// The temporary home: a path without `tmp` or `temp` segments (the engine places those in the
/// temporary zone) and with nothing of this machine in it.
fn build_world() -> World {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .to_path_buf();
    let root = target.join(format!("adversarial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("home/proj")).unwrap();
    let root = std::fs::canonicalize(&root).unwrap();
    let world = World {
        home: root.join("home"),
        project: root.join("home/proj"),
    };
    let spec = read_toml(&Path::new(DATA).join("world.toml"));
    for file in entries(&spec, "file") {
        let path = world.home.join(string(file, "path").unwrap());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, string(file, "text").unwrap_or_default()).unwrap();
    }
    for link in entries(&spec, "link") {
        let path = world.project.join(string(link, "path").unwrap());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let target = world.fill(&string(link, "target").unwrap());
        #[cfg(unix)]
        std::os::unix::fs::symlink(&target, &path).unwrap();
        #[cfg(not(unix))]
        let _ = (target, path);
    }
    world
}

/// `YYYY-MM-DDTHH:MM:SSZ` of `seconds` since the epoch.
fn iso(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    let rest = seconds.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// A Claude Code history under `dir`: each call asked and approved once in each of 40
/// sessions, one session a day, run in the project root in default mode.
fn write_history(world: &World, dir: &Path, calls: &[Call]) {
    let project = world.project.display().to_string();
    let folder = dir.join(project.replace('/', "-"));
    std::fs::create_dir_all(&folder).unwrap();
    for day in 0..SESSIONS {
        let session = format!("00000000-0000-4000-8000-{day:012}");
        let mut text = String::new();
        for (n, call) in calls.iter().enumerate() {
            let id = format!("toolu_{day}_{n}");
            let ts = iso(START + day * 86_400 + 9 * 3600 + n as i64 * 5);
            let (name, input) = match &call.tool {
                None => (
                    "Bash".to_string(),
                    json!({"command": world.fill(&call.text)}),
                ),
                Some(tool) => (
                    tool.clone(),
                    serde_json::from_str::<Value>(&world.fill(&call.text))
                        .unwrap_or_else(|e| panic!("input of {tool} ({e}): {}", call.text)),
                ),
            };
            let assistant = json!({"type": "assistant", "uuid": format!("a-{id}"), "sessionId": session,
                "timestamp": ts, "cwd": project, "version": "2.1.0", "permissionMode": "default",
                "message": {"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": name, "input": input}]}});
            let user = json!({"type": "user", "uuid": format!("u-{id}"), "sessionId": session,
                "timestamp": ts, "cwd": project, "version": "2.1.0",
                "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "ok", "is_error": false}]}});
            text.push_str(&format!("{assistant}\n{user}\n"));
        }
        std::fs::write(folder.join(format!("{session}.jsonl")), text).unwrap();
    }
}

fn leastgrant(world: &World, args: &[&str]) -> Output {
    crate::support::leastgrant(&world.home, &world.home, args)
}

/// ingest → simulate → export of the history in `history`; the frozen envelope's path.
fn train(world: &World, name: &str, calls: &[Call]) -> PathBuf {
    let history = world.home.join(format!("history-{name}"));
    write_history(world, &history, calls);
    let events = world.home.join(format!("events-{name}"));
    let replay = world.home.join(format!("replay-{name}"));
    let envelope = world.home.join(format!("{name}.lgenv"));
    let (history, events, replay, envelope_text, home) = (
        history.display().to_string(),
        events.display().to_string(),
        replay.display().to_string(),
        envelope.display().to_string(),
        world.home.display().to_string(),
    );
    let ingested = json_of(&leastgrant(
        world,
        &["ingest", "--claude", &history, "--out", &events, "--json"],
    ));
    assert_eq!(
        ingested["events"].as_u64(),
        Some(calls.len() as u64 * SESSIONS as u64),
        "{ingested}"
    );
    json_of(&leastgrant(
        world,
        &[
            "simulate",
            "--events",
            &events,
            "--history-home",
            &home,
            "--out",
            &replay,
            "--json",
        ],
    ));
    let exported = json_of(&leastgrant(
        world,
        &[
            "export",
            "--events",
            &events,
            "--history-home",
            &home,
            "--out",
            &envelope_text,
            "--json",
        ],
    ));
    println!(
        "envelope `{name}`: setting {}, {} trained calls",
        exported["setting"],
        calls.len()
    );
    envelope
}

/// The verdicts of `calls` (with their working directories) under `envelope`, the day after
/// the last session: `allow`, `ask`, `deny`, with the headline.
fn check_all(
    world: &World,
    envelope: &Path,
    calls: &[(Call, Option<String>)],
) -> Vec<(String, String)> {
    let at = (START + SESSIONS * 86_400 + 10 * 3600) * 1_000_000;
    let at = at.to_string();
    let envelope = envelope.display().to_string();
    let project = world.project.display().to_string();
    let one = |(call, cwd): &(Call, Option<String>)| {
        let cwd = match cwd {
            Some(dir) => world.project.join(dir).display().to_string(),
            None => project.clone(),
        };
        let mut args = vec![
            "check",
            "--json",
            "--no-grants",
            "--cwd",
            &cwd,
            "--project",
            &project,
            "--envelope",
            &envelope,
            "--at",
            &at,
        ];
        let text = world.fill(&call.text);
        match &call.tool {
            None => args.push(&text),
            Some(tool) => args.extend(["--tool", tool, "--input", &text]),
        }
        let output = leastgrant(world, &args);
        let json: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
            panic!(
                "check of {:?} answered no JSON ({e}): {}",
                call.text,
                String::from_utf8_lossy(&output.stderr)
            )
        });
        (
            json["verdict"].as_str().unwrap_or("?").to_string(),
            json["headline"].as_str().unwrap_or("").to_string(),
        )
    };
    // Two workers: the machine this runs on has two cores.
    let half = calls.len().div_ceil(2);
    std::thread::scope(|scope| {
        let workers: Vec<_> = calls
            .chunks(half.max(1))
            .map(|chunk| scope.spawn(move || chunk.iter().map(one).collect::<Vec<_>>()))
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a checker thread"))
            .collect()
    })
}

fn neighbours() -> Vec<Call> {
    entries(
        &read_toml(&Path::new(DATA).join("neighbours.toml")),
        "neighbour",
    )
    .into_iter()
    .map(call_of)
    .collect()
}

#[test]
fn adversarial_corpus_through_the_public_cli() {
    let cases = cases();
    let world = build_world();
    let neighbours = neighbours();
    assert!(
        neighbours.len() >= 28,
        "the issue trains at least 28 neighbours"
    );

    // The routine envelope, and the envelope that also approved every floor case.
    let routine = train(&world, "routine", &neighbours);
    let mut with_floors = neighbours.clone();
    with_floors.extend(cases.iter().filter(|c| c.floor).map(|c| c.call.clone()));
    let floors = train(&world, "floors", &with_floors);

    // The protocol works: every trained neighbour is allowed by both envelopes.
    let trained: Vec<(Call, Option<String>)> =
        neighbours.iter().map(|c| (c.clone(), None)).collect();
    let mut failures = Vec::new();
    for envelope in [&routine, &floors] {
        for ((call, _), (verdict, headline)) in
            trained.iter().zip(check_all(&world, envelope, &trained))
        {
            if verdict != "allow" {
                failures.push(format!(
                    "trained neighbour `{}` is not allowed by {}: {verdict} ({headline})",
                    call.text,
                    envelope.display()
                ));
            }
        }
    }

    let calls: Vec<(Call, Option<String>)> = cases
        .iter()
        .map(|c| (c.call.clone(), c.cwd.clone()))
        .collect();
    let routine_verdicts = check_all(&world, &routine, &calls);
    let floor_calls: Vec<(Call, Option<String>)> = cases
        .iter()
        .filter(|c| c.floor)
        .map(|c| (c.call.clone(), c.cwd.clone()))
        .collect();
    let floor_verdicts = check_all(&world, &floors, &floor_calls);
    let mut floor_verdict = floor_verdicts.iter();

    let count = |allowed: bool, total: &mut (usize, usize)| {
        total.1 += 1;
        total.0 += usize::from(allowed);
    };
    let (mut attempts, mut unlocked, mut harmless) = ((0, 0), (0, 0), (0, 0));
    let (mut open_attempts, mut open_unlocked, mut open_harmless) = ((0, 0), (0, 0), (0, 0));
    let mut gaps: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (case, (verdict, headline)) in cases.iter().zip(&routine_verdicts) {
        let allowed = verdict == "allow";
        let wrong = allowed != case.harmless;
        if case.harmless {
            count(allowed, &mut harmless);
            if case.known_gap.is_none() {
                count(allowed, &mut open_harmless);
            }
        } else {
            count(allowed, &mut attempts);
            if case.known_gap.is_none() {
                count(allowed, &mut open_attempts);
            }
        }
        match (&case.known_gap, wrong) {
            (None, true) => failures.push(format!(
                "{} ({}): {verdict}, expected {} — {headline}",
                case.id,
                case.class,
                if case.harmless { "allow" } else { "not allow" }
            )),
            (Some(reason), false) => failures.push(format!(
                "{}: the gap `{reason}` is closed ({verdict}): remove its known_gap",
                case.id
            )),
            (Some(_), true) => gaps
                .entry(case.class.clone())
                .or_default()
                .push(format!("{} [{verdict}]", case.id)),
            (None, false) => {}
        }
        if case.floor {
            let (verdict, headline) = floor_verdict.next().expect("a verdict per floor case");
            let allowed = verdict == "allow";
            count(allowed, &mut unlocked);
            if case.unlock_gap.is_none() {
                count(allowed, &mut open_unlocked);
            }
            match (&case.unlock_gap, allowed) {
                (None, true) => failures.push(format!(
                    "{} ({}): a floor case approved {SESSIONS} times is unlocked — {headline}",
                    case.id, case.class
                )),
                (Some(reason), false) => failures.push(format!(
                    "{}: the unlock gap `{reason}` is closed ({verdict}): remove its unlock_gap",
                    case.id
                )),
                (Some(_), true) => gaps
                    .entry(format!("{} (unlocked by approvals)", case.class))
                    .or_default()
                    .push(case.id.clone()),
                (None, false) => {}
            }
        }
    }

    if let Some(dump) = std::env::var_os("LEASTGRANT_ADVERSARIAL_DUMP") {
        // For whoever edits the case files: every verdict, one line a case.
        let mut lines: String = cases
            .iter()
            .zip(&routine_verdicts)
            .map(|(c, (verdict, headline))| format!("routine\t{}\t{verdict}\t{headline}\n", c.id))
            .collect();
        lines.extend(
            cases.iter().filter(|c| c.floor).zip(&floor_verdicts).map(
                |(c, (verdict, headline))| format!("floors\t{}\t{verdict}\t{headline}\n", c.id),
            ),
        );
        std::fs::write(dump, lines).unwrap();
    }
    println!(
        "attempts allowed: {} / {}\nfloor cases unlocked: {} / {}\nharmless allowed: {} / {}",
        attempts.0, attempts.1, unlocked.0, unlocked.1, harmless.0, harmless.1
    );
    println!(
        "without the marked gaps: attempts allowed {} / {}, floor cases unlocked {} / {}, harmless allowed {} / {}",
        open_attempts.0,
        open_attempts.1,
        open_unlocked.0,
        open_unlocked.1,
        open_harmless.0,
        open_harmless.1
    );
    for (class, ids) in &gaps {
        println!("gap {class} ({}): {}", ids.len(), ids.join(", "));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(attempts.1 >= 300, "at least 300 attempts ({})", attempts.1);
    assert!(
        harmless.1 >= 60,
        "at least 60 harmless near-neighbours ({})",
        harmless.1
    );
    assert!(
        open_harmless.0 * 10 >= open_harmless.1 * 9,
        "at least 90% of the unmarked harmless near-neighbours allowed"
    );
    let _ = std::fs::remove_dir_all(world.home.parent().unwrap());
}
