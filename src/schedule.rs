//! `leastgrant schedule`: a periodic `leastgrant ingest --keep-deleted` for this user, so the
//! events table outlives the agents' own retention (Claude Code deletes transcripts older than
//! `cleanupPeriodDays` when it starts) and becomes the durable record.
//!
//! Owns the three ways of running it — a systemd user timer and its service (Linux, where
//! `systemctl --user` answers), a launchd agent (macOS), a crontab line (elsewhere) — their
//! texts, where they live, and whether one is installed (`doctor` asks). Shows what it would
//! write by default; `--write` writes it (each file atomically and owner-only, after showing it)
//! and tells the scheduler, `--remove` takes it away. A file at one of these places that
//! `leastgrant schedule` did not write, and every crontab line that is not ours, is left as it
//! is. Running it twice changes nothing the second time.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use clap::{Args, ValueEnum};
use leastgrant_hook::files;
use leastgrant_hook::layout;

#[derive(Args)]
pub struct ScheduleArgs {
    /// Install the periodic ingest (what is written is shown first).
    #[arg(long, conflicts_with = "remove")]
    write: bool,
    /// Remove the periodic ingest `leastgrant schedule` installed, and nothing else.
    #[arg(long)]
    remove: bool,
    /// The scheduler [default: launchd on macOS; a systemd user timer where `systemctl --user`
    /// answers; else cron].
    #[arg(long, value_enum)]
    with: Option<Scheduler>,
    /// How often the ingest runs.
    #[arg(long, value_enum, default_value_t = Every::Daily)]
    every: Every,
    /// Write or remove the files, but do not run `systemctl --user` or `launchctl` (load them
    /// yourself, or at the next login).
    #[arg(long)]
    no_activate: bool,
}

/// Who runs the periodic ingest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Scheduler {
    /// A systemd user timer and service (`~/.config/systemd/user`).
    Systemd,
    /// A launchd agent (`~/Library/LaunchAgents`).
    Launchd,
    /// A line in the user's crontab.
    Cron,
}

impl Scheduler {
    fn as_str(self) -> &'static str {
        match self {
            Scheduler::Systemd => "systemd user timer",
            Scheduler::Launchd => "launchd agent",
            Scheduler::Cron => "crontab line",
        }
    }
}

/// How often.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Every {
    /// Once an hour.
    Hourly,
    /// Once a day (missed runs are made up at the next boot or login where the scheduler can).
    Daily,
}

impl Every {
    fn as_str(self) -> &'static str {
        match self {
            Every::Hourly => "hourly",
            Every::Daily => "daily",
        }
    }

    /// The longest time between two runs.
    pub fn period(self) -> Duration {
        match self {
            Every::Hourly => Duration::from_secs(3600),
            Every::Daily => Duration::from_secs(86_400),
        }
    }
}

/// The systemd units' and the launchd agent's name.
const UNIT: &str = "leastgrant-ingest";
const LABEL: &str = "dev.leastgrant.ingest";
/// What every file and crontab line this command writes carries, so it is told from others'.
const MARK: &str = "Written by `leastgrant schedule`";
/// The comment ending our crontab line.
const CRON_MARK: &str = "# leastgrant schedule";

/// Where the user's files are and what the ingest runs with.
struct Context {
    home: PathBuf,
    /// `$XDG_CONFIG_HOME`, else `~/.config`.
    config_home: PathBuf,
    /// The leastgrant binary the ingest runs (this one).
    program: PathBuf,
    /// Variables that move what the ingest reads and writes, carried over when set here.
    env: Vec<(&'static str, String)>,
}

/// Variables carried into the scheduled run when they are set here: where leastgrant keeps its
/// state, and where Claude Code and Codex keep their history.
const CARRIED: [&str; 3] = ["LEASTGRANT_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME"];

impl Context {
    fn from_env() -> Result<Context> {
        let home = layout::home();
        let config_home = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| home.join(".config"));
        let program = std::env::current_exe()
            .and_then(fs::canonicalize)
            .context("cannot find the leastgrant binary to schedule")?;
        let env = CARRIED
            .into_iter()
            .filter_map(|name| {
                let value = std::env::var(name).ok()?;
                (!value.is_empty()).then_some((name, value))
            })
            .collect();
        Ok(Context {
            home,
            config_home,
            program,
            env,
        })
    }

    fn args(&self) -> Vec<String> {
        vec![
            self.program.display().to_string(),
            "ingest".to_string(),
            "--keep-deleted".to_string(),
        ]
    }

    fn systemd_dir(&self) -> PathBuf {
        self.config_home.join("systemd/user")
    }

    fn plist(&self) -> PathBuf {
        self.home
            .join("Library/LaunchAgents")
            .join(format!("{LABEL}.plist"))
    }
}

/// A file of the schedule and its text.
struct Unit {
    path: PathBuf,
    text: String,
}

/// `leastgrant schedule`: exit 0, or 3 on an error.
pub fn schedule_command(args: &ScheduleArgs) -> Result<ExitCode> {
    let context = Context::from_env()?;
    let scheduler = args.with.unwrap_or_else(detect);
    for (_, value) in &context.env {
        if value.contains('\n') {
            bail!("an environment value holds a line break; it cannot be scheduled");
        }
    }
    if context.program.to_string_lossy().contains('\n') {
        bail!("the leastgrant binary's path holds a line break; it cannot be scheduled");
    }
    if args.remove {
        return remove(&context, scheduler, args.no_activate);
    }
    let what = format!(
        "a {} `leastgrant ingest --keep-deleted` with a {}",
        args.every.as_str(),
        scheduler.as_str()
    );
    match scheduler {
        Scheduler::Systemd | Scheduler::Launchd => {
            let units = units(&context, scheduler, args.every);
            let mut changed = Vec::new();
            for unit in &units {
                let state = file_state(&unit.path, &unit.text)?;
                if state == FileState::Foreign {
                    bail!(
                        "{} exists and was not written by `leastgrant schedule`: left as it is; move it away to schedule the ingest",
                        unit.path.display()
                    );
                }
                if state != FileState::Same {
                    changed.push(unit);
                }
            }
            if changed.is_empty() {
                println!("{what} is installed, unchanged:");
                for unit in &units {
                    println!("  {}", unit.path.display());
                }
            } else {
                let verb = if args.write { "writing" } else { "would write" };
                println!("{what}; {verb}:");
                for unit in &changed {
                    println!("\n{} (mode 600):", unit.path.display());
                    print!("{}", indent(&unit.text));
                }
                println!();
            }
            let activation = activation(&context, scheduler);
            if args.write {
                for unit in &changed {
                    write_owner_only(&unit.path, &unit.text)?;
                }
                if scheduler == Scheduler::Launchd {
                    // launchd opens the error log there before the ingest has made it.
                    let state = layout::state_dir_from_env(&context.home);
                    files::create_private_dir(&state)
                        .with_context(|| format!("cannot create {}", state.display()))?;
                }
                if args.no_activate {
                    println!("not activated (--no-activate): {}", activation.join("; "));
                } else {
                    activate(&context, scheduler)?;
                    println!("activated: {}", activation.join("; "));
                }
            } else {
                println!(
                    "then: {}\nrun `leastgrant schedule --write` to install it",
                    activation.join("; ")
                );
            }
        }
        Scheduler::Cron => {
            let line = cron_line(&context, args.every);
            let current = match read_crontab() {
                Ok(current) => current,
                Err(error) if !args.write => {
                    println!("{what}; this line, for your crontab:\n  {line}\n({error:#})");
                    return Ok(ExitCode::SUCCESS);
                }
                Err(error) => return Err(error),
            };
            let next = with_our_line(&current, Some(&line));
            if next == current {
                println!("{what} is installed, unchanged:\n  {line}");
            } else {
                let verb = if args.write { "adding" } else { "would add" };
                println!("{what}; {verb} this line to your crontab (other lines kept):\n  {line}");
                if args.write {
                    write_crontab(&next)?;
                } else {
                    println!("run `leastgrant schedule --write` to install it");
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// launchd on macOS; elsewhere a systemd user timer when `systemctl --user` answers, else cron.
fn detect() -> Scheduler {
    if cfg!(target_os = "macos") {
        return Scheduler::Launchd;
    }
    let answers = Command::new("systemctl")
        .args(["--user", "show-environment"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if answers {
        Scheduler::Systemd
    } else {
        Scheduler::Cron
    }
}

/// The files of a systemd or launchd schedule.
fn units(context: &Context, scheduler: Scheduler, every: Every) -> Vec<Unit> {
    match scheduler {
        Scheduler::Systemd => {
            let dir = context.systemd_dir();
            vec![
                Unit {
                    path: dir.join(format!("{UNIT}.service")),
                    text: systemd_service(context),
                },
                Unit {
                    path: dir.join(format!("{UNIT}.timer")),
                    text: systemd_timer(every),
                },
            ]
        }
        Scheduler::Launchd => vec![Unit {
            path: context.plist(),
            text: launchd_plist(context, every),
        }],
        Scheduler::Cron => Vec::new(),
    }
}

fn systemd_service(context: &Context) -> String {
    let mut text = format!(
        "# {MARK}: reads agent histories into leastgrant's events table\n\
         # before the agents delete them. `leastgrant schedule --remove` removes it.\n\
         [Unit]\n\
         Description=leastgrant: read agent histories into the events table\n\
         \n\
         [Service]\n\
         Type=oneshot\n"
    );
    for (name, value) in &context.env {
        text.push_str(&format!(
            "Environment={}\n",
            systemd_quote(&format!("{name}={value}"))
        ));
    }
    let command: Vec<String> = context.args().iter().map(|a| systemd_quote(a)).collect();
    text.push_str(&format!(
        "ExecStart={}\nNice=10\nIOSchedulingClass=idle\n",
        command.join(" ")
    ));
    text
}

fn systemd_timer(every: Every) -> String {
    format!(
        "# {MARK}: runs {UNIT}.service {every}.\n\
         # `leastgrant schedule --remove` removes it.\n\
         [Unit]\n\
         Description=leastgrant: read agent histories {every}, before the agents delete them\n\
         \n\
         [Timer]\n\
         OnCalendar={every}\n\
         Persistent=true\n\
         RandomizedDelaySec=10min\n\
         \n\
         [Install]\n\
         WantedBy=timers.target\n",
        every = every.as_str()
    )
}

fn launchd_plist(context: &Context, every: Every) -> String {
    let state = layout::state_dir_from_env(&context.home);
    let mut text = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n\
         <!-- {MARK}: reads agent histories into leastgrant's events table\n     \
         before the agents delete them. `leastgrant schedule --remove` removes it. -->\n\
         <plist version=\"1.0\">\n\
         <dict>\n\
         \t<key>Label</key>\n\t<string>{LABEL}</string>\n\
         \t<key>ProgramArguments</key>\n\t<array>\n"
    );
    for arg in context.args() {
        text.push_str(&format!("\t\t<string>{}</string>\n", xml_escape(&arg)));
    }
    text.push_str("\t</array>\n");
    if !context.env.is_empty() {
        text.push_str("\t<key>EnvironmentVariables</key>\n\t<dict>\n");
        for (name, value) in &context.env {
            text.push_str(&format!(
                "\t\t<key>{name}</key>\n\t\t<string>{}</string>\n",
                xml_escape(value)
            ));
        }
        text.push_str("\t</dict>\n");
    }
    text.push_str(&format!(
        "\t<key>StartInterval</key>\n\t<integer>{}</integer>\n\
         \t<key>RunAtLoad</key>\n\t<true/>\n\
         \t<key>ProcessType</key>\n\t<string>Background</string>\n\
         \t<key>LowPriorityIO</key>\n\t<true/>\n\
         \t<key>StandardErrorPath</key>\n\t<string>{}</string>\n\
         </dict>\n\
         </plist>\n",
        every.period().as_secs(),
        xml_escape(&state.join("schedule.log").display().to_string())
    ));
    text
}

/// Our crontab line: the ingest at 17 minutes past the hour (hourly) or at 03:17 (daily), its
/// standard output dropped (cron mails what is left: errors).
fn cron_line(context: &Context, every: Every) -> String {
    let when = match every {
        Every::Hourly => "17 * * * *",
        Every::Daily => "17 3 * * *",
    };
    let mut words: Vec<String> = context
        .env
        .iter()
        .map(|(name, value)| format!("{name}={}", cron_quote(value)))
        .collect();
    words.extend(context.args().iter().map(|a| cron_quote(a)));
    format!("{when} {} >/dev/null {CRON_MARK}", words.join(" "))
}

/// A word for a systemd command line or `Environment=`: as it is when plain, else in double
/// quotes with `\` and `"` escaped; `%` (a specifier) doubled, `$` (a variable) doubled.
fn systemd_quote(word: &str) -> String {
    let escaped = word.replace('%', "%%").replace('$', "$$");
    let plain = !escaped.is_empty()
        && escaped
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%$".contains(c));
    if plain {
        escaped
    } else {
        format!("\"{}\"", escaped.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// A word for a crontab line: in single quotes unless plain, and `%` (a line break to cron)
/// escaped.
fn cron_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@".contains(c));
    let quoted = if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    };
    quoted.replace('%', "\\%")
}

fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

/// What is at one of the schedule's places.
#[derive(Debug, PartialEq, Eq)]
enum FileState {
    Absent,
    /// Ours, with this text.
    Same,
    /// Ours, with another text (another binary, interval or environment).
    Older,
    /// Not ours (or not a regular file).
    Foreign,
}

fn file_state(path: &Path, text: &str) -> Result<FileState> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(FileState::Absent),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    if !meta.is_file() {
        return Ok(FileState::Foreign);
    }
    let current =
        fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(if current == text {
        FileState::Same
    } else if is_ours(&current) {
        FileState::Older
    } else {
        FileState::Foreign
    })
}

fn is_ours(text: &str) -> bool {
    text.lines().take(4).any(|l| l.contains(MARK))
}

/// Writes `text` to `path` atomically and owner-only, creating missing directories owner-only.
fn write_owner_only(path: &Path, text: &str) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    files::create_private_dir(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut staged = std::ffi::OsString::from(".");
    staged.push(path.file_name().unwrap_or_default());
    staged.push(format!(".leastgrant-{}.tmp", std::process::id()));
    files::replace(path, &dir.join(staged), text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The commands that load the schedule, as text.
fn activation(context: &Context, scheduler: Scheduler) -> Vec<String> {
    match scheduler {
        Scheduler::Systemd => vec![
            "systemctl --user daemon-reload".to_string(),
            format!("systemctl --user enable --now {UNIT}.timer"),
        ],
        Scheduler::Launchd => vec![
            format!("launchctl bootout gui/$UID/{LABEL}"),
            format!("launchctl bootstrap gui/$UID {}", context.plist().display()),
        ],
        Scheduler::Cron => Vec::new(),
    }
}

fn run(program: &str, args: &[&str], must_succeed: bool) -> Result<()> {
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run `{program}`"))?;
    if must_succeed && !output.status.success() {
        bail!(
            "`{program} {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(())
}

/// The user id launchd's domain is named by: the owner of the agent file just written.
fn uid_of(path: &Path) -> Result<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        Ok(fs::metadata(path)
            .with_context(|| format!("cannot read {}", path.display()))?
            .uid())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        bail!("launchd runs on macOS only")
    }
}

fn activate(context: &Context, scheduler: Scheduler) -> Result<()> {
    match scheduler {
        Scheduler::Systemd => {
            run("systemctl", &["--user", "daemon-reload"], true)?;
            run(
                "systemctl",
                &["--user", "enable", "--now", &format!("{UNIT}.timer")],
                true,
            )
        }
        Scheduler::Launchd => {
            let plist = context.plist();
            let domain = format!("gui/{}", uid_of(&plist)?);
            // Not loaded yet is not an error.
            run(
                "launchctl",
                &["bootout", &format!("{domain}/{LABEL}")],
                false,
            )?;
            run(
                "launchctl",
                &["bootstrap", &domain, &plist.display().to_string()],
                true,
            )
        }
        Scheduler::Cron => Ok(()),
    }
}

fn remove(context: &Context, scheduler: Scheduler, no_activate: bool) -> Result<ExitCode> {
    match scheduler {
        Scheduler::Systemd | Scheduler::Launchd => {
            let paths: Vec<PathBuf> = match scheduler {
                Scheduler::Systemd => ["service", "timer"]
                    .iter()
                    .map(|ext| context.systemd_dir().join(format!("{UNIT}.{ext}")))
                    .collect(),
                _ => vec![context.plist()],
            };
            let ours: Vec<&PathBuf> = paths
                .iter()
                .filter(|p| fs::read_to_string(p).is_ok_and(|t| is_ours(&t)))
                .collect();
            for path in paths.iter().filter(|p| !ours.contains(p)) {
                if fs::symlink_metadata(path).is_ok() {
                    println!(
                        "{} was not written by `leastgrant schedule`: left as it is",
                        path.display()
                    );
                }
            }
            if ours.is_empty() {
                println!("no {} of leastgrant's to remove", scheduler.as_str());
                return Ok(ExitCode::SUCCESS);
            }
            if !no_activate {
                match scheduler {
                    Scheduler::Systemd => run(
                        "systemctl",
                        &["--user", "disable", "--now", &format!("{UNIT}.timer")],
                        false,
                    )?,
                    _ => {
                        let domain = format!("gui/{}", uid_of(&context.plist())?);
                        run(
                            "launchctl",
                            &["bootout", &format!("{domain}/{LABEL}")],
                            false,
                        )?;
                    }
                }
            }
            for path in &ours {
                fs::remove_file(path)
                    .with_context(|| format!("cannot remove {}", path.display()))?;
                println!("removed {}", path.display());
            }
            if scheduler == Scheduler::Systemd && !no_activate {
                run("systemctl", &["--user", "daemon-reload"], false)?;
            }
        }
        Scheduler::Cron => {
            let current = read_crontab()?;
            let next = with_our_line(&current, None);
            if next == current {
                println!("no crontab line of leastgrant's to remove");
            } else {
                write_crontab(&next)?;
                println!("removed leastgrant's line from your crontab (other lines kept)");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The user's crontab (empty when there is none: `crontab -l` then fails, saying so).
fn read_crontab() -> Result<String> {
    let output = Command::new("crontab")
        .arg("-l")
        .stdin(Stdio::null())
        .output()
        .context("cannot run `crontab -l` (is cron installed? `--with systemd` or `--with launchd` use another scheduler)")?;
    if output.status.success() {
        return String::from_utf8(output.stdout).context("the crontab is not UTF-8");
    }
    let error = String::from_utf8_lossy(&output.stderr);
    if error.to_lowercase().contains("no crontab") {
        Ok(String::new())
    } else {
        bail!("`crontab -l` failed: {}", error.trim())
    }
}

/// Installs `text` as the user's crontab (`crontab -`, which replaces it whole).
fn write_crontab(text: &str) -> Result<()> {
    let mut child = Command::new("crontab")
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot run `crontab -`")?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(text.as_bytes())
            .context("cannot write to `crontab -`")?;
    }
    let output = child.wait_with_output().context("`crontab -` failed")?;
    if !output.status.success() {
        bail!(
            "`crontab -` failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(())
}

/// `crontab` with our line replaced by `line` (or taken out), every other line kept as it is.
fn with_our_line(crontab: &str, line: Option<&str>) -> String {
    let mut lines: Vec<&str> = crontab
        .lines()
        .filter(|l| !l.trim_end().ends_with(CRON_MARK))
        .collect();
    lines.extend(line);
    let mut text = lines.join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    if crontab.lines().eq(text.lines()) {
        // Nothing changed: keep the bytes as they were (a missing final line break included).
        return crontab.to_string();
    }
    text
}

/// A periodic ingest that `leastgrant schedule` installed, found without running a scheduler
/// (a crontab is read with `crontab -l` only when `crontab` is installed).
pub struct Installed {
    /// Which scheduler, and where.
    pub text: String,
    /// The longest time between two runs.
    pub every: Duration,
    /// The program it runs, when it can be read back from our own text.
    pub program: Option<PathBuf>,
}

/// The program of our systemd service (`ExecStart=`), launchd agent (the first of
/// `ProgramArguments`) or crontab line (the first word after the variables), undoing the
/// quoting this file applies.
fn program_of(scheduler: Scheduler, text: &str) -> Option<PathBuf> {
    let word = match scheduler {
        Scheduler::Systemd => {
            let line = text.lines().find_map(|l| l.strip_prefix("ExecStart="))?;
            match line.strip_prefix('"') {
                Some(rest) => {
                    let mut out = String::new();
                    let mut chars = rest.chars();
                    while let Some(c) = chars.next() {
                        match c {
                            '\\' => out.extend(chars.next()),
                            '"' => break,
                            c => out.push(c),
                        }
                    }
                    out
                }
                None => line.split(' ').next()?.to_string(),
            }
            .replace("%%", "%")
            .replace("$$", "$")
        }
        Scheduler::Launchd => {
            let after = text.split("<key>ProgramArguments</key>").nth(1)?;
            let start = after.find("<string>")? + "<string>".len();
            let end = after.find("</string>")?;
            after
                .get(start..end)?
                .replace("&quot;", "\"")
                .replace("&gt;", ">")
                .replace("&lt;", "<")
                .replace("&amp;", "&")
        }
        Scheduler::Cron => {
            // After the five time fields and the NAME=value words.
            let rest = text
                .split_whitespace()
                .skip(5)
                .collect::<Vec<_>>()
                .join(" ");
            let mut rest = rest.as_str();
            loop {
                let (word, tail) = cron_word(rest)?;
                if word.contains('=') && !word.starts_with('/') {
                    rest = tail;
                } else {
                    break word;
                }
            }
        }
    };
    Some(PathBuf::from(word))
}

/// The first shell word of `text` as [`cron_quote`] writes words, and what follows it.
fn cron_word(text: &str) -> Option<(String, &str)> {
    let text = text.trim_start();
    let mut word = String::new();
    let mut chars = text.char_indices().peekable();
    let mut quoted = false;
    while let Some((i, c)) = chars.next() {
        match c {
            '\'' => quoted = !quoted,
            '\\' if !quoted => {
                if let Some((_, next)) = chars.next() {
                    word.push(next);
                }
            }
            ' ' if !quoted => return Some((word, text.get(i..)?)),
            c => word.push(c),
        }
    }
    (!word.is_empty()).then_some((word, ""))
}

/// The schedule installed for this user, if any.
pub fn installed() -> Option<Installed> {
    let context = Context::from_env().ok()?;
    let period_of = |text: &str| {
        if text.contains("OnCalendar=hourly") || text.contains("<integer>3600</integer>") {
            Every::Hourly.period()
        } else {
            Every::Daily.period()
        }
    };
    let timer = context.systemd_dir().join(format!("{UNIT}.timer"));
    let service = context.systemd_dir().join(format!("{UNIT}.service"));
    for (path, scheduler) in [
        (&timer, Scheduler::Systemd),
        (&context.plist(), Scheduler::Launchd),
    ] {
        if let Ok(text) = fs::read_to_string(path)
            && is_ours(&text)
            && (scheduler != Scheduler::Systemd || service.is_file())
        {
            let program = match scheduler {
                Scheduler::Systemd => fs::read_to_string(&service)
                    .ok()
                    .and_then(|t| program_of(scheduler, &t)),
                _ => program_of(scheduler, &text),
            };
            return Some(Installed {
                text: format!("{} {}", scheduler.as_str(), path.display()),
                every: period_of(&text),
                program,
            });
        }
    }
    let has_crontab = std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join("crontab").is_file()));
    if has_crontab {
        let crontab = read_crontab().ok()?;
        let line = crontab
            .lines()
            .find(|l| l.trim_end().ends_with(CRON_MARK))?;
        let every = if line.starts_with("17 * ") {
            Every::Hourly
        } else {
            Every::Daily
        };
        return Some(Installed {
            text: "crontab line".to_string(),
            every: every.period(),
            program: program_of(Scheduler::Cron, line),
        });
    }
    None
}
