//! Symbolic links: placement with links resolved is never looser than placement by text
//! (a property over random link maps on a small path vocabulary), and the words name the link.

use std::sync::Arc;

use leastgrant_engine::{
    Action, Analysis, Context, Decision, Envelope, Evidence, NoAnswers, Placement, Posture,
    Resolver, Roots, SessionState, Settings, ToolCall, analyze, decide,
};
use proptest::prelude::*;

use crate::support::*;

/// A file system that is only links: `link → target` (absolute paths), walked as the kernel
/// walks a path (each component, links followed from the link's directory, at most 40).
#[derive(Debug, Clone)]
struct MapLinks(Vec<(String, String)>);

impl Resolver for MapLinks {
    fn resolve(&self, path: &str) -> Option<String> {
        let mut pending: Vec<String> = path
            .split('/')
            .filter(|s| !s.is_empty())
            .rev()
            .map(str::to_string)
            .collect();
        let mut at: Vec<String> = Vec::new();
        let mut hops = 0;
        while let Some(segment) = pending.pop() {
            match segment.as_str() {
                "." => continue,
                ".." => {
                    at.pop();
                    continue;
                }
                _ => at.push(segment),
            }
            let here = format!("/{}", at.join("/"));
            if let Some((_, target)) = self.0.iter().find(|(link, _)| *link == here) {
                hops += 1;
                if hops > 40 {
                    return None;
                }
                at.pop();
                if target.starts_with('/') {
                    at.clear();
                }
                pending.extend(
                    target
                        .split('/')
                        .filter(|s| !s.is_empty())
                        .rev()
                        .map(str::to_string),
                );
            }
        }
        Some(format!("/{}", at.join("/")))
    }

    fn links_below(&self, dir: &str) -> Option<Vec<String>> {
        let below = format!("{dir}/");
        self.0
            .iter()
            .filter(|(link, _)| link.starts_with(&below))
            .map(|(link, _)| self.resolve(link))
            .collect()
    }
}

/// A file system whose directories hold more entries than a call may look at.
#[derive(Debug)]
struct TooManyEntries;

impl Resolver for TooManyEntries {
    fn resolve(&self, path: &str) -> Option<String> {
        Some(path.to_string())
    }

    fn links_below(&self, _dir: &str) -> Option<Vec<String>> {
        None
    }
}

fn linked_roots(links: Vec<(String, String)>) -> Roots {
    let mut roots = roots();
    roots.see_links(Arc::new(MapLinks(links)));
    roots
}

/// Where links sit (in the project and the home) and where they may lead.
const LINK_PLACES: &[&str] = &[
    "/home/dev/proj/docs/a",
    "/home/dev/proj/vendor/b",
    "/home/dev/proj/x.md",
    "/home/dev/proj/src",
    "/home/dev/dir",
    "/home/dev/proj",
];
const LINK_TARGETS: &[&str] = &[
    "/home/dev/.ssh",
    "/home/dev/.aws/credentials",
    "/home/dev",
    "/",
    "/etc",
    "/home/dev/proj/src",
    "/home/dev/proj/docs",
    "/home/dev/.bashrc",
    "/home/dev/.leastgrant",
    "/home/dev/.codex",
    "/tmp/x",
    "../README.md",
    "b",
    "/data/proj",
];
/// Paths as a command writes them (relative to the project).
const WORDS: &[&str] = &[
    "docs/a",
    "docs/a/id_rsa",
    "docs/a/config",
    "docs/a/../z",
    "vendor/b/x.txt",
    "vendor/b/.bashrc",
    "x.md",
    "src/main.rs",
    "README.md",
    "~/dir/y",
    "~/.ssh/id_ed25519",
    "docs/guide.md",
    "/etc/hosts",
];
const TEMPLATES: &[&str] = &[
    "cat {}",
    "cp README.md {}",
    "grep -rn TODO {}",
    "echo x > {}",
    "rm -rf {}",
    "touch {}",
    "sed -n 1,20p {}",
    "ls -la {}",
    "cd {} && cat notes.txt",
    "tool:Read",
    "tool:Write",
    "tool:Edit",
    "tool:Grep",
];

fn call_for(template: &str, word: &str) -> ToolCall {
    let absolute = if word.starts_with('/') {
        word.to_string()
    } else if let Some(rest) = word.strip_prefix("~/") {
        format!("{HOME}/{rest}")
    } else {
        format!("{PROJECT}/{word}")
    };
    let input = match template {
        "tool:Read" => serde_json::json!({ "file_path": absolute }),
        "tool:Write" => serde_json::json!({ "file_path": absolute, "content": "x" }),
        "tool:Edit" => {
            serde_json::json!({ "file_path": absolute, "old_string": "a", "new_string": "b" })
        }
        "tool:Grep" => serde_json::json!({ "pattern": "x", "path": absolute }),
        shell => return ToolCall::shell(&shell.replace("{}", word), Some(PROJECT)),
    };
    ToolCall {
        tool: template.trim_start_matches("tool:").to_string(),
        input,
        cwd: Some(PROJECT.to_string()),
        descriptor: None,
    }
}

fn no_looser(text: &Placement, linked: &Placement) -> Result<(), String> {
    let ok = linked.zone.strictness() >= text.zone.strictness()
        && (linked.secret || !text.secret)
        && (linked.persistence || !text.persistence)
        && (linked.control || !text.control)
        && (linked.own_state || !text.own_state);
    if ok {
        Ok(())
    } else {
        Err(format!("{linked:?} is looser than {text:?}"))
    }
}

fn decide_with(analysis: &Analysis, envelope: &Envelope, posture: Posture) -> Decision {
    let settings = Settings {
        posture,
        ..Settings::default()
    };
    decide(
        analysis,
        &Context {
            envelope,
            session: &SessionState::default(),
            answers: &NoAnswers,
            settings: &settings,
            now_us: T0 + 60 * DAY_US,
        },
    )
    .decision
}

fn link_map() -> impl Strategy<Value = Vec<(String, String)>> {
    prop::collection::vec(
        (
            prop::sample::select(LINK_PLACES),
            prop::sample::select(LINK_TARGETS),
        ),
        0..4,
    )
    .prop_map(|pairs| {
        let mut map: Vec<(String, String)> = Vec::new();
        for (place, target) in pairs {
            if !map.iter().any(|(p, _)| p == place) {
                map.push((place.to_string(), target.to_string()));
            }
        }
        map
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Every path placed with links is at least as strict as by its text alone.
    #[test]
    fn a_path_placed_through_links_is_never_looser(
        links in link_map(),
        word in prop::sample::select(WORDS),
    ) {
        let plain = roots();
        let linked = linked_roots(links);
        let path = leastgrant_engine::resolve(word, Some(PROJECT), &plain);
        let text = leastgrant_engine::place(path.as_deref(), &plain);
        let through = leastgrant_engine::resolve(word, Some(PROJECT), &linked);
        let resolved = leastgrant_engine::place(through.as_deref(), &linked);
        prop_assert!(no_looser(&text, &resolved).is_ok(), "{word}: {:?}", no_looser(&text, &resolved));
    }

    /// A call's targets and verdict with links are never looser than by text, even when the
    /// envelope learned the call by its text (as the replay, which sees no links, learns it).
    #[test]
    fn a_call_decided_through_links_is_never_looser(
        links in link_map(),
        template in prop::sample::select(TEMPLATES),
        word in prop::sample::select(WORDS),
    ) {
        let call = call_for(template, word);
        let by_text = analyze(&call, &roots());
        let through = analyze(&call, &linked_roots(links));
        prop_assert_eq!(by_text.actions.len(), through.actions.len());
        for (a, b) in by_text.actions.iter().zip(&through.actions) {
            check_targets(a, b)?;
        }
        let mut envelope = Envelope::default();
        for day in 0..40 {
            envelope.learn_event(&by_text, Evidence::Confirmed, T0 + day * DAY_US, &format!("s{day}"), None);
        }
        for posture in [Posture::Assist, Posture::Autopilot, Posture::Strict] {
            let text_decision = decide_with(&by_text, &envelope, posture);
            let link_decision = decide_with(&through, &envelope, posture);
            prop_assert!(
                link_decision >= text_decision,
                "{:?} {}: {:?} with links, {:?} by text", posture, call.input, link_decision, text_decision
            );
        }
    }
}

fn check_targets(text: &Action, linked: &Action) -> Result<(), TestCaseError> {
    // A `..` after a link makes the path unresolved (the action not understood): at least as
    // strict, whatever its targets.
    if !linked.understood && text.understood {
        return Ok(());
    }
    for t in &text.targets {
        let Some(l) = linked
            .targets
            .iter()
            .find(|l| l.path == t.path && l.access == t.access)
        else {
            // The same word resolved elsewhere only when it became unresolved.
            prop_assert!(!linked.understood, "target {} vanished", t.path);
            continue;
        };
        prop_assert!(
            no_looser(&t.placement, &l.placement).is_ok(),
            "{}: {:?}",
            t.path,
            no_looser(&t.placement, &l.placement)
        );
    }
    Ok(())
}

/// The words of a floor reached through a link name the link and where it leads.
#[test]
fn the_headline_names_the_link_and_its_target() {
    let roots = linked_roots(vec![(
        format!("{PROJECT}/docs/x.md"),
        format!("{HOME}/.aws/credentials"),
    )]);
    let analysis = analyze(&ToolCall::shell("cat docs/x.md", Some(PROJECT)), &roots);
    let verdict = decide_fresh(&analysis, T0);
    assert_eq!(
        verdict.headline,
        format!(
            "it reads credentials: `{PROJECT}/docs/x.md` is a link to `{HOME}/.aws/credentials`"
        )
    );
    let analysis = analyze(
        &ToolCall::shell("cp README.md docs/x.md", Some(PROJECT)),
        &roots,
    );
    assert!(
        decide_fresh(&analysis, T0)
            .headline
            .ends_with(&format!("is a link to `{HOME}/.aws/credentials`")),
    );
}

/// A walk that follows links (`grep -R`, `rg -L`, `find -L`, `fd -L`) reaches where the links
/// below its directory lead; the same walk without following them does not; and one whose
/// directory holds more than the caller could look at is not understood.
#[test]
fn a_walk_that_follows_links_reaches_where_they_lead() {
    let linked = linked_roots(vec![(
        format!("{PROJECT}/docs/keys"),
        format!("{HOME}/.ssh"),
    )]);
    let cases = [
        ("grep -R TODO docs", true),
        ("grep -nR TODO docs", true),
        ("grep --dereference-recursive TODO docs", true),
        ("rg -L TODO docs", true),
        ("find -L docs -name '*.md'", true),
        ("find docs -follow -name '*.md'", true),
        ("fd -L md docs", true),
        ("grep -r TODO docs", false),
        ("rg TODO docs", false),
        ("find docs -name '*.md'", false),
        ("grep -R TODO src", false),
    ];
    for (command, reaches) in cases {
        let analysis = analyze(&ToolCall::shell(command, Some(PROJECT)), &linked);
        let headline = decide_fresh(&analysis, T0).headline;
        assert_eq!(
            headline.contains("reads credentials"),
            reaches,
            "{command}: {headline}"
        );
        assert!(analysis.understood, "{command}: {:?}", analysis.problems);
    }
    let mut crowded = roots();
    crowded.see_links(Arc::new(TooManyEntries));
    let analysis = analyze(
        &ToolCall::shell("grep -R TODO docs", Some(PROJECT)),
        &crowded,
    );
    assert!(!analysis.understood);
    let analysis = analyze(
        &ToolCall::shell("grep -r TODO docs", Some(PROJECT)),
        &crowded,
    );
    assert!(analysis.understood, "{:?}", analysis.problems);
}

/// Whether any target of the analysis lies outside the project or is a credential or a
/// persistence point.
fn reaches_beyond(analysis: &Analysis) -> bool {
    analysis.actions.iter().any(|action| {
        action.targets.iter().any(|t| {
            t.placement.secret
                || t.placement.persistence
                || t.placement.zone != leastgrant_engine::Zone::Workspace
        })
    })
}

/// The other programs that follow links while they walk a tree (copies, archives, listings,
/// mode changes, remote copies) reach where the links below it lead; the same programs without
/// following them do not; and a copy writes through the link of the name it lands on (GNU cp
/// opens an existing destination file through its link), a recursive one through those below
/// where it lands, `rsync -K` through linked directories there.
#[test]
fn copies_archives_and_mode_changes_that_follow_links_reach_where_they_lead() {
    let linked = linked_roots(vec![
        (format!("{PROJECT}/docs/keys"), format!("{HOME}/.ssh")),
        (
            format!("{PROJECT}/site/README.md"),
            format!("{HOME}/.bashrc"),
        ),
        (
            format!("{PROJECT}/site/src/main.py"),
            format!("{HOME}/.bashrc"),
        ),
        (format!("{PROJECT}/build/cache"), format!("{HOME}/.ssh")),
    ]);
    let cases = [
        ("cp -rL docs out", true),
        ("cp -RL docs out", true),
        ("cp -R -L docs out", true),
        ("cp -r --dereference docs out", true),
        ("cp -aL docs out", true),
        ("cp -r docs out", false),
        ("cp -a docs out", false),
        ("cp -rH docs out", false),
        ("cp -rL src out", false),
        ("rsync -aL docs out", true),
        ("rsync -a --copy-links docs out", true),
        ("rsync -a --copy-unsafe-links docs out", true),
        ("rsync -ak docs out", true),
        ("rsync -a --copy-dirlinks docs out", true),
        ("rsync -aL docs host:/srv", true),
        ("rsync -a docs out", false),
        ("rsync -L docs/a.md out", false),
        ("rsync -aK src/ build/", true),
        ("rsync -aK src build", false),
        ("rsync -a src/ build/", false),
        ("tar -chf out.tar docs", true),
        ("tar --dereference -czf out.tgz docs", true),
        ("tar czhf out.tgz docs", true),
        ("tar -cf out.tar docs", false),
        ("zip -r out.zip docs", true),
        ("zip -ry out.zip docs", false),
        ("zip -r --symlinks out.zip docs", false),
        ("zip out.zip docs/a.md", false),
        ("7z a out.7z docs", true),
        ("7z a -snl out.7z docs", false),
        ("du -L docs", true),
        ("du -sh docs", false),
        ("ls -RL docs", true),
        ("ls -R docs", false),
        ("ls -L docs", false),
        ("tree -l docs", true),
        ("tree docs", false),
        ("eza -RX docs", true),
        ("eza -T --dereference docs", true),
        ("exa --recurse -X docs", true),
        ("eza -R docs", false),
        ("eza -T docs", false),
        ("eza -X docs", false),
        ("lsd -RL docs", true),
        ("lsd --tree --dereference docs", true),
        ("lsd -R docs", false),
        ("chmod -RL u+w docs", true),
        ("chmod -R -L u+w docs", true),
        ("chmod -R u+w docs", false),
        ("chown -RL dev docs", true),
        ("chgrp -RL staff docs", true),
        ("chown -R dev docs", false),
        ("scp -r docs host:/srv", true),
        ("scp docs/a.md host:/srv", false),
        ("aws s3 sync docs s3://b/x", true),
        ("aws s3 cp --recursive docs s3://b/x", true),
        ("aws s3 sync --no-follow-symlinks docs s3://b/x", false),
        ("rclone copy -L docs remote:x", true),
        ("rclone copy docs remote:x", false),
        ("ack --follow TODO docs", true),
        ("ugrep -rS TODO docs", true),
        ("cp README.md site", true),
        ("cp README.md site/", true),
        ("cp -t site README.md", true),
        ("cp src/main.py site/src", true),
        ("cp -T README.md site", false),
        ("cp src/util.py site/src", false),
        ("cp README.md docs", false),
        ("install README.md site", false),
        ("cp -r src site", true),
        ("cp -a src site", true),
        ("cp -r src/ site", true),
        ("cp -r src build", false),
        ("cp -r lib site", false),
        ("cp src/main.py build", false),
    ];
    for (command, reaches) in cases {
        let analysis = analyze(&ToolCall::shell(command, Some(PROJECT)), &linked);
        assert_eq!(reaches_beyond(&analysis), reaches, "{command}");
        assert!(analysis.understood, "{command}: {:?}", analysis.problems);
    }
    // With no path, a walk is of the working directory.
    for command in ["ls -RL", "du -L", "tree -l", "fd -L id"] {
        let analysis = analyze(
            &ToolCall::shell(command, Some(&format!("{PROJECT}/docs"))),
            &linked,
        );
        assert!(reaches_beyond(&analysis), "{command}");
    }
    // A replay sees no links: every one of these is placed by its text, in the project.
    let plain = roots();
    for command in [
        "cp -rL docs out",
        "cp README.md site",
        "cp -r src site",
        "zip -r o.zip docs",
    ] {
        let analysis = analyze(&ToolCall::shell(command, Some(PROJECT)), &plain);
        assert!(!reaches_beyond(&analysis), "{command}");
    }
    // A walk past what the caller may look at is not understood.
    let mut crowded = roots();
    crowded.see_links(Arc::new(TooManyEntries));
    for command in ["cp -rL docs out", "chmod -RL u+w docs", "cp -r src site"] {
        let analysis = analyze(&ToolCall::shell(command, Some(PROJECT)), &crowded);
        assert!(!analysis.understood, "{command}");
        // Placed nowhere, so no posture waives it as contained in the project.
        assert!(reaches_beyond(&analysis), "{command}");
    }
}

/// A file system of links and directory listings: what a glob names on it.
#[derive(Debug)]
struct GlobDisk {
    links: MapLinks,
    dirs: Vec<(String, Vec<&'static str>)>,
}

impl Resolver for GlobDisk {
    fn resolve(&self, path: &str) -> Option<String> {
        self.links.resolve(path)
    }

    fn links_below(&self, dir: &str) -> Option<Vec<String>> {
        self.links.links_below(dir)
    }

    fn expand_glob(&self, glob: &str) -> Option<Vec<String>> {
        leastgrant_engine::expand_glob(glob, |dir| {
            self.dirs.iter().find(|(d, _)| d == dir).map(|(_, names)| {
                names
                    .iter()
                    .map(|n| {
                        let path = format!("{dir}/{n}");
                        let is_dir = self.dirs.iter().any(|(d, _)| *d == path)
                            || self.links.0.iter().any(|(link, _)| *link == path);
                        (n.to_string(), is_dir)
                    })
                    .collect()
            })
        })
    }
}

/// A glob is placed by what it names on the caller's disk: `cat src/*.py` reads the project's
/// Python files, not a `local_settings.py` its text could name; `cat docs/*.md` reads where a
/// link named `notes.md` leads. When nothing matches, or the caller cannot tell, the text's
/// answer stands, and so does it for names outside the project.
#[test]
fn a_glob_is_placed_by_what_it_names_on_the_disk() {
    let disk = |dirs: Vec<(String, Vec<&'static str>)>| {
        let mut roots = roots();
        roots.see_links(Arc::new(GlobDisk {
            links: MapLinks(vec![
                (
                    format!("{PROJECT}/docs/notes.md"),
                    format!("{HOME}/.aws/credentials"),
                ),
                (format!("{PROJECT}/docs/keys"), format!("{HOME}/.ssh")),
            ]),
            dirs,
        }));
        roots
    };
    let listed = disk(vec![
        (
            format!("{PROJECT}/src"),
            vec!["main.py", "util.py", "lib.rs"],
        ),
        (
            format!("{PROJECT}/docs"),
            vec!["guide.md", "notes.md", "keys"],
        ),
        (format!("{PROJECT}/settings"), vec!["local_settings.py"]),
        (format!("{HOME}/.ssh"), vec!["config", "id_ed25519"]),
    ]);
    let cases = [
        ("cat src/*.py", false),
        ("wc -l src/*.py", false),
        ("cat src/*.{py,rs}", false),
        ("cat docs/*.md", true),
        ("cat docs/n*", true),
        ("cat docs/g*.md", false),
        ("cat settings/*.py", true),
        ("cat none/*.py", true),
        ("cat ~/.ssh/*", true),
        ("grep -R TODO docs/*", true),
        ("cat docs/**/*.md", true),
        ("cat src/**/*.py", false),
        ("cat **/*.py", true),
        ("cat src/**", false),
        ("grep -r TODO docs/g*", false),
    ];
    for (command, reaches) in cases {
        let analysis = analyze(&ToolCall::shell(command, Some(PROJECT)), &listed);
        let secret = analysis
            .actions
            .iter()
            .any(|a| a.targets.iter().any(|t| t.placement.secret));
        assert_eq!(secret, reaches, "{command}");
        assert!(analysis.understood, "{command}: {:?}", analysis.problems);
    }
    // A structured Grep's `glob` filter (ripgrep's, any depth below its path) is expanded
    // the same way; a negated one (every other file) keeps the text's answer.
    for (filter, path, reaches) in [
        ("*.py", "src", false),
        ("*.md", "docs", true),
        ("!*.py", "src", true),
        ("*.py", "settings", true),
    ] {
        let input = serde_json::json!({
            "pattern": "TODO", "path": format!("{PROJECT}/{path}"), "glob": filter,
        });
        let call = ToolCall {
            tool: "Grep".to_string(),
            input,
            cwd: Some(PROJECT.to_string()),
            descriptor: None,
        };
        let analysis = analyze(&call, &listed);
        let secret = analysis
            .actions
            .iter()
            .any(|a| a.targets.iter().any(|t| t.placement.secret));
        assert_eq!(secret, reaches, "Grep {filter} in {path}");
    }
    // A caller that cannot list (the replay) keeps the text's answer.
    let analysis = analyze(&ToolCall::shell("cat src/*.py", Some(PROJECT)), &roots());
    assert!(
        analysis
            .actions
            .iter()
            .any(|a| a.targets.iter().any(|t| t.placement.secret))
    );
}

/// A program that writes into a directory under a name it picks writes through the link of
/// that name: `curl -O`, `wget`, `scp host:f dir` (and `-r` through the links below), and
/// `tar -x`/`unzip` through the links below where they extract. A name the engine cannot know
/// (a server's, a remote glob's) is any entry of the directory; a directory without such a
/// link stays in the project.
#[test]
fn a_download_lands_through_the_link_of_the_name_it_picks() {
    let mut disk = roots();
    disk.see_links(Arc::new(GlobDisk {
        links: MapLinks(vec![
            (
                format!("{PROJECT}/site/README.md"),
                format!("{HOME}/.bashrc"),
            ),
            (
                format!("{PROJECT}/site/src/main.py"),
                format!("{HOME}/.bashrc"),
            ),
        ]),
        dirs: vec![
            (format!("{PROJECT}/site"), vec!["README.md", "src", "a.txt"]),
            (format!("{PROJECT}/site/src"), vec!["main.py"]),
            (format!("{PROJECT}/lib"), vec!["x.py"]),
        ],
    }));
    let url = "https://x.example/a";
    let cases = [
        (format!("curl -O {url}/README.md"), "site", true),
        (format!("curl -sSLO {url}/README.md"), "site", true),
        (format!("curl -O {url}/y.tgz"), "site", false),
        (format!("curl -O {url}/README.md"), "lib", false),
        (
            format!("curl -O --output-dir site {url}/README.md"),
            "",
            true,
        ),
        (
            format!("curl -O --output-dir lib {url}/README.md"),
            "",
            false,
        ),
        (format!("curl -OJ {url}/y.tgz"), "site", true),
        (format!("curl -OJ {url}/y.tgz"), "lib", false),
        (format!("curl -O '{url}/y.tgz?raw=1'"), "site", true),
        (
            format!("curl --remote-name-all {url}/y {url}/README.md"),
            "site",
            true,
        ),
        (format!("curl -o y.tgz {url}/README.md"), "site", false),
        (format!("wget {url}/README.md"), "site", true),
        (format!("wget -c {url}/README"), "site", true),
        (format!("wget {url}/y.tgz"), "site", false),
        (format!("wget -P site {url}/README.md"), "", true),
        (format!("wget -P lib {url}/README.md"), "", false),
        (format!("wget -O y.tgz {url}/README.md"), "site", false),
        (format!("wget -r {url}/"), "site", true),
        (format!("wget -r {url}/"), "lib", false),
        ("scp h:out/README.md site".to_string(), "", true),
        ("scp h:out/README.md .".to_string(), "site", true),
        ("scp h:out/y.tgz site".to_string(), "", false),
        ("scp 'h:out/*.md' site".to_string(), "", true),
        ("scp 'h:out/*.md' lib".to_string(), "", false),
        ("scp -r h:out/src site".to_string(), "", true),
        ("scp -r h:out/lib site".to_string(), "", false),
        ("scp h:out/src site".to_string(), "", false),
        (format!("git clone {url}/README.md.git"), "site", true),
        (format!("git clone {url}/y.git"), "site", false),
        (format!("git clone {url}/README.md.git"), "lib", false),
        ("tar -xf a.tar -C site".to_string(), "", true),
        ("tar -xf a.tar".to_string(), "site", true),
        ("tar -xf a.tar -C lib".to_string(), "", false),
        ("unzip a.zip -d site".to_string(), "", true),
        ("unzip a.zip -d lib".to_string(), "", false),
    ];
    for (command, cwd, reaches) in &cases {
        let cwd = format!("{PROJECT}/{cwd}");
        let analysis = analyze(
            &ToolCall::shell(command, Some(cwd.trim_end_matches('/'))),
            &disk,
        );
        assert_eq!(reaches_beyond(&analysis), *reaches, "{command} in {cwd}");
    }
    // Where curl writes, with no link on the way: a bundle's `-o` (`-sSo FILE`), and `-o`
    // below `--output-dir`.
    for (command, reaches) in [
        (format!("curl -sSo ../../x.txt {url}/y"), true),
        (format!("curl -sSo x.txt {url}/y"), false),
        (format!("curl -o x.txt --output-dir {HOME} {url}/y"), true),
        (format!("curl -o x.txt --output-dir=lib {url}/y"), false),
    ] {
        let analysis = analyze(&ToolCall::shell(&command, Some(PROJECT)), &roots());
        assert_eq!(reaches_beyond(&analysis), reaches, "{command}");
    }
    // A replay sees no links: placed by their text, in the project.
    for (command, cwd, _) in &cases {
        let cwd = format!("{PROJECT}/{cwd}");
        let analysis = analyze(
            &ToolCall::shell(command, Some(cwd.trim_end_matches('/'))),
            &roots(),
        );
        assert!(!reaches_beyond(&analysis), "{command} in {cwd}");
    }
}
