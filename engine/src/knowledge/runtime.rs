//! Containers, databases, process and system control, and language interpreters.
//!
//! Interpreters with inline code or a script are opaque: the engine has not read the code.
//! Known `python -m` modules (pytest, mypy, pip, …) are judged like their own commands.

use super::classification::{Classification, Invocation, Judge};
use crate::model::{Access, Capability as C, Exposure, Reach, Reversibility, Scale};
use crate::static_index::{Names, flags, name_set};

pub(super) const TABLE: &[(&[&str], Judge)] = &[
    (&["docker", "podman", "nerdctl", "buildah"], container),
    (&["docker-compose", "podman-compose"], compose),
    (
        &[
            "kind",
            "minikube",
            "k3d",
            "colima",
            "lima",
            "limactl",
            "multipass",
        ],
        local_cluster,
    ),
    (
        &[
            "psql",
            "mysql",
            "mariadb",
            "sqlite3",
            "mongosh",
            "mongo",
            "redis-cli",
            "clickhouse-client",
            "cqlsh",
            "sqlcmd",
            "duckdb",
            "pg_dump",
            "pg_restore",
            "mysqldump",
            "createdb",
            "dropdb",
            "pg_ctl",
            "influx",
        ],
        database,
    ),
    (
        &[
            "alembic",
            "flyway",
            "liquibase",
            "prisma",
            "sequelize",
            "knex",
            "dbmate",
            "goose",
            "migrate",
            "diesel",
            "sqlx",
            "atlas",
            "drizzle-kit",
        ],
        migrator,
    ),
    (
        &[
            "ps",
            "pgrep",
            "top",
            "htop",
            "btop",
            "lsof",
            "pstree",
            "pidof",
            "jobs",
            "uptime",
            "w",
            "who",
            "last",
            "journalctl",
            "dmesg",
            "systemd-analyze",
            "fuser",
            "pmap",
            "strace",
            "ltrace",
            "gdb",
            "lldb",
            "perf",
            "valgrind",
            "time",
        ],
        process_inspect,
    ),
    (&["kill", "pkill", "killall", "xkill", "renice"], kill),
    (
        &[
            "systemctl",
            "service",
            "launchctl",
            "sc",
            "schtasks",
            "crontab",
            "at",
            "batch",
            "loginctl",
            "rc-service",
            "update-rc.d",
            "chkconfig",
            "reg",
            "defaults",
        ],
        system_service,
    ),
    (
        &[
            "mount",
            "umount",
            "mkfs",
            "fdisk",
            "parted",
            "mkswap",
            "swapon",
            "swapoff",
            "losetup",
            "cryptsetup",
            "iptables",
            "ip6tables",
            "nft",
            "ufw",
            "firewall-cmd",
            "sysctl",
            "modprobe",
            "insmod",
            "rmmod",
            "shutdown",
            "reboot",
            "halt",
            "poweroff",
            "init",
            "useradd",
            "userdel",
            "usermod",
            "groupadd",
            "passwd",
            "chpasswd",
            "visudo",
            "setenforce",
            "csrutil",
            "diskutil",
            "hdiutil",
            "wipefs",
            "blkdiscard",
            "sgdisk",
            "mdadm",
            "lvm",
            "pvcreate",
            "vgcreate",
            "lvcreate",
            "chroot",
            "unshare",
            "nsenter",
            "capsh",
            "setcap",
            "security",
            // `osascript` is an interpreter (below).
            "tccutil",
            "spctl",
            "scutil",
            "networksetup",
            "pmset",
            "nvram",
        ],
        system_admin,
    ),
    (
        &[
            "python", "python3", "python2", "pypy", "pypy3", "py", "ipython",
        ],
        python,
    ),
    (&["source", "."], sourced),
    (
        &[
            "node",
            "nodejs",
            "ruby",
            "perl",
            "php",
            "lua",
            "luajit",
            "rscript",
            "r",
            "julia",
            "java",
            "kotlin",
            "scala",
            "groovy",
            "elixir",
            "erl",
            "ghci",
            "runghc",
            "racket",
            "guile",
            "tclsh",
            "wish",
            "powershell",
            "pwsh",
            "cmd",
            "cscript",
            "wscript",
            "mshta",
            "osascript",
            "jshell",
            "irb",
            "pry",
            "dotnet-script",
            "ts-node",
            "tsx",
            "esno",
            "vite-node",
            "awk",
            "gawk",
            "mawk",
            "nawk",
            "expect",
            "jrunscript",
            "rhino",
            "qjs",
        ],
        interpreter,
    ),
];

fn container(inv: &Invocation<'_>) -> Classification {
    let positionals = inv.positionals(flags![
        "-H",
        "--host",
        "--context",
        "-c",
        "--config",
        "-l",
        "--log-level",
        "-f",
        "--file",
        "-t",
        "--tag",
        "--name",
        "-e",
        "--env",
        "-p",
        "--publish",
        "-v",
        "--volume",
        "-w",
        "--workdir",
        "--network",
        "--platform",
        "-u",
        "--user",
        "--entrypoint",
        "--mount",
        "--format",
        "--filter",
    ]);
    if inv.has_any(flags!["-H", "--host", "--context", "--config"]) {
        return Classification::opaque(
            C::ExecContainer,
            "points the container client at another daemon",
        );
    }
    let sub = positionals.first().map(|w| w.text.as_str()).unwrap_or("");
    if sub == "compose" {
        let after: Vec<crate::shell::lex::Word> = inv
            .args
            .iter()
            .skip_while(|w| w.text != "compose")
            .skip(1)
            .cloned()
            .collect();
        return compose(&Invocation {
            program: "docker-compose",
            args: &after,
            config_keys: &[],
        });
    }
    let verb = positionals.get(1).map(|w| w.text.as_str()).unwrap_or("");
    let sub = if matches!(
        sub,
        "container" | "image" | "volume" | "network" | "system" | "builder" | "buildx" | "compose"
    ) && !verb.is_empty()
        && sub != "compose"
    {
        verb
    } else {
        sub
    };
    match sub {
        "ps" | "images" | "ls" | "inspect" | "logs" | "version" | "info" | "stats" | "top"
        | "history" | "port" | "diff" | "events" | "df" | "search" | "--version" | "" => {
            Classification::new(C::ExecContainerRead)
        }
        "exec" | "attach" | "debug" => {
            Classification::opaque(C::ExecContainer, "runs commands inside a container")
        }
        "run" | "create" => {
            let dangerous_mount = inv.args.iter().any(|w| {
                let t = w.text.as_str();
                t.contains("docker.sock")
                    || t.starts_with("/:")
                    || t.contains("=/,")
                    || t.ends_with("=/")
                    || t.starts_with("/etc:")
                    || t.starts_with("~/")
                    || t.contains("/home/")
            });
            if inv.has("--privileged")
                || inv.args.iter().any(|w| {
                    matches!(
                        w.text.as_str(),
                        "--pid=host"
                            | "--net=host"
                            | "--network=host"
                            | "--cap-add=ALL"
                            | "--cap-add=SYS_ADMIN"
                            | "--userns=host"
                            | "--ipc=host"
                    )
                })
                || dangerous_mount
            {
                return Classification::opaque(
                    C::ExecPrivilege,
                    "a container with host privileges or host files",
                );
            }
            Classification::opaque(
                C::ExecContainer,
                "runs an image whose contents the engine has not read",
            )
        }
        "build" => Classification::new(C::ExecContainer),
        "pull" => Classification::new(C::ExecContainer).reach(Reach::Network),
        "push" | "login" | "logout" | "tag" if sub != "tag" => {
            Classification::new(C::ExecPkgPublish)
        }
        "tag" | "start" | "stop" | "restart" | "pause" | "unpause" | "kill" | "wait" | "rename"
        | "update" => Classification::new(C::ExecContainer),
        "rm" | "rmi" | "prune" | "kill-all" => {
            let mut j = Classification::new(C::ExecContainer).reversibility(Reversibility::Hard);
            if inv.has_any(flags!["-a", "--all", "-f", "--force", "--volumes"]) {
                j = j
                    .scale(Scale::Sweeping)
                    .reversibility(Reversibility::Irreversible);
            }
            j
        }
        "cp" => Classification::new(C::ExecContainer).reversibility(Reversibility::Hard),
        "save" | "export" => Classification::new(C::FsWriteWorkspace)
            .with_paths(inv.value(flags!["-o", "--output"]), Access::Write),
        "load" | "import" => Classification::new(C::ExecContainer),
        _ => Classification::opaque(C::ExecContainer, "an unknown container command"),
    }
}

fn compose(inv: &Invocation<'_>) -> Classification {
    let sub = inv.sub(flags![
        "-f",
        "--file",
        "-p",
        "--project-name",
        "--profile",
        "--env-file",
    ]);
    match sub.as_str() {
        "ps" | "logs" | "config" | "images" | "ls" | "top" | "version" | "port" | "events" => {
            Classification::new(C::ExecContainerRead)
        }
        "exec" | "run" => {
            Classification::opaque(C::ExecContainer, "runs commands inside a container")
        }
        "up" | "create" | "start" | "restart" | "watch" => Classification::opaque(
            C::ExecContainer,
            "runs images whose contents the engine has not read",
        ),
        "down" if inv.has_any(flags!["-v", "--volumes", "--rmi"]) => {
            Classification::new(C::ExecContainer).reversibility(Reversibility::Irreversible)
        }
        "push" => Classification::new(C::ExecPkgPublish),
        _ => Classification::new(C::ExecContainer),
    }
}

fn local_cluster(inv: &Invocation<'_>) -> Classification {
    match inv.sub(flags!["--name", "-p", "--profile"]).as_str() {
        "get" | "status" | "version" | "ip" | "logs" | "list" | "profile" => {
            Classification::new(C::ExecContainerRead)
        }
        "ssh" | "shell" | "exec" => {
            Classification::opaque(C::ExecContainer, "a shell inside the cluster")
        }
        "delete" => Classification::new(C::ExecContainer).reversibility(Reversibility::Hard),
        _ => Classification::new(C::ExecContainer),
    }
}

name_set! {
    static SQL_WRITES = &[
        "insert", "update", "delete", "drop", "truncate", "alter", "create", "grant", "revoke", "copy",
        "call", "do", "merge", "vacuum", "reindex", "attach", "replace", "upsert", "rename", "set",
        "load", "import", "flushall", "flushdb", "del", "hset", "lpush", "sadd", "expire", "shutdown",
        "config",
    ];
}

fn database(inv: &Invocation<'_>) -> Classification {
    if matches!(inv.program, "dropdb") {
        return Classification::new(C::ExecDb).reversibility(Reversibility::Irreversible);
    }
    if matches!(inv.program, "pg_dump" | "mysqldump") {
        let mut j = Classification::new(C::ExecDbRead).exposure(Exposure::ReadsSecrets);
        if let Some(out) = inv.any_value(flags!["-f", "--file", "-r", "--result-file"]) {
            j.targets.push((out, Access::Write));
        }
        return j;
    }
    if matches!(inv.program, "mongosh" | "mongo") && inv.has_any(flags!["--eval", "-f", "--file"])
        || matches!(inv.program, "mongosh" | "mongo")
            && inv
                .positionals(flags!["--host", "--port", "-u", "-p"])
                .iter()
                .any(|w| w.text.ends_with(".js"))
    {
        return Classification::opaque(C::ExecDb, "runs JavaScript in the database shell");
    }
    let inline = inv.any_value(flags!["-c", "--command", "-e", "--execute", "--eval"]);
    let file = inv.any_value(flags!["-f", "--file"]);
    let text = match (&inline, inv.program) {
        (Some(sql), _) => Some(sql.text.to_string()),
        (None, "sqlite3" | "duckdb") => inv
            .positionals(flags!["-cmd", "-init", "-separator"])
            .get(1)
            .map(|w| w.text.to_string()),
        (None, "redis-cli") => Some(
            inv.positionals(flags!["-h", "-p", "-a", "-n", "-u"])
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => None,
    };
    // Client meta-commands and SQL functions that reach the shell or the file system.
    let escapes = |sql: &str| {
        let lower = sql.to_ascii_lowercase();
        [
            "\\!",
            "\\o",
            "\\g |",
            "\\copy",
            " program ",
            "\\setenv",
            ".shell",
            ".system",
            ".output",
            ".once",
            ".import",
            ".read",
            ".load",
            ".excel",
            "writefile(",
            "readfile(",
            "load_extension",
            "edit(",
        ]
        .iter()
        .any(|m| lower.contains(m))
            || lower.trim_start().starts_with("system ")
            || lower.contains(";system ")
    };
    if text.as_deref().is_some_and(escapes) || inv.any_value(flags!["-cmd", "-init"]).is_some() {
        return Classification::opaque(
            C::ExecDb,
            "a client command that runs programs or reads and writes files",
        );
    }
    if inv.program == "redis-cli" {
        name_set! {
            static READ = &[
                "get", "mget", "keys", "scan", "info", "type", "ttl", "pttl", "exists", "hget",
                "hgetall", "hkeys", "hlen", "lrange", "llen", "smembers", "scard", "zrange", "zcard",
                "ping", "dbsize", "strlen", "echo", "time", "memory", "xrange", "xlen",
            ];
        }
        let verb = text
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        if verb.is_empty() {
            return Classification::opaque(C::ExecDb, "an interactive database session");
        }
        return if READ.contains(&verb) {
            Classification::new(C::ExecDbRead)
        } else {
            Classification::new(C::ExecDb).reversibility(Reversibility::Hard)
        };
    }
    let mut j = match (text, file) {
        (_, Some(f)) => {
            Classification::opaque(C::ExecDb, "runs SQL from a file the engine has not read")
                .with_paths([&f], Access::Read)
        }
        (Some(sql), None) => {
            let lower = sql.to_ascii_lowercase();
            let writes = lower
                .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .any(|w| SQL_WRITES.contains(w));
            if writes {
                let mut j = Classification::new(C::ExecDb);
                if lower.contains("drop") || lower.contains("truncate") || lower.contains("delete")
                {
                    j = j.reversibility(Reversibility::Irreversible);
                }
                j
            } else if lower.trim().is_empty() {
                Classification::opaque(C::ExecDb, "an interactive database session")
            } else {
                Classification::new(C::ExecDbRead)
            }
        }
        (None, None) => Classification::opaque(
            C::ExecDb,
            "an interactive database session or SQL from standard input",
        ),
    };
    // Files the client's own options write, whatever the SQL: `psql -o FILE` (query output),
    // `psql -L FILE` (session log), `mysql --tee=FILE`.
    let writes: &[Names<'_>] = match inv.program {
        "psql" => &[flags!["-o", "--output"], flags!["-L", "--log-file"]],
        "mysql" | "mariadb" => &[flags!["--tee"]],
        _ => &[],
    };
    for flag in writes {
        if let Some(out) = inv.any_value(*flag) {
            j.targets.push((out, Access::Write));
        }
    }
    let local = inv.args.iter().all(|w| {
        !w.text.contains("://") || w.text.contains("localhost") || w.text.contains("127.0.0.1")
    }) && inv
        .any_value(flags!["-h", "--host"])
        .is_none_or(|h| matches!(h.text.as_str(), "localhost" | "127.0.0.1" | "::1"));
    if local {
        j.blast.reach = j.blast.reach.min(Reach::Machine);
        if j.capability == C::ExecDbRead {
            j.blast.reach = Reach::Machine;
        }
    }
    if inv.args.iter().any(|w| {
        let t = w.text.to_ascii_lowercase();
        t.contains("prod") && !t.contains("product")
    }) {
        j.blast.reach = Reach::Production;
    }
    if matches!(inv.program, "sqlite3" | "duckdb")
        && let Some(db) = inv
            .positionals(flags!["-cmd", "-init", "-separator"])
            .first()
    {
        j.targets.push((
            (*db).clone(),
            if j.capability == C::ExecDbRead {
                Access::Read
            } else {
                Access::Write
            },
        ));
        j.blast.reach = Reach::Workspace;
    }
    j
}

fn migrator(inv: &Invocation<'_>) -> Classification {
    let words: Vec<String> = inv
        .positionals(flags![
            "-c",
            "--config",
            "--schema",
            "-d",
            "--database-url",
            "--url",
        ])
        .iter()
        .map(|w| w.text.to_ascii_lowercase())
        .collect();
    let read = words.iter().any(|w| {
        matches!(
            w.as_str(),
            "status"
                | "current"
                | "history"
                | "info"
                | "validate"
                | "show"
                | "heads"
                | "check"
                | "diff"
                | "format"
                | "generate"
                | "list"
                | "version"
        )
    });
    let destroy = words.iter().any(|w| {
        matches!(
            w.as_str(),
            "reset" | "drop" | "clean" | "downgrade" | "down" | "rollback" | "revert" | "undo"
        )
    });
    if destroy {
        Classification::new(C::ExecDb).reversibility(Reversibility::Irreversible)
    } else if read
        && !words.iter().any(|w| {
            matches!(
                w.as_str(),
                "deploy" | "push" | "up" | "upgrade" | "migrate" | "run" | "apply" | "seed"
            )
        })
    {
        Classification::new(C::ExecDbRead)
    } else {
        Classification::new(C::ExecDb)
    }
}

fn process_inspect(inv: &Invocation<'_>) -> Classification {
    // `fuser -k` kills every process using the file or port.
    if inv.program == "fuser" && inv.has_any(flags!["-k", "--kill"]) {
        return Classification::new(C::ExecProcess)
            .reversibility(Reversibility::Hard)
            .scale(Scale::Many);
    }
    if matches!(
        inv.program,
        "strace" | "ltrace" | "gdb" | "lldb" | "perf" | "valgrind"
    ) {
        return Classification::opaque(C::ExecProcess, "attaches to or runs another program");
    }
    // `ps e`, `ps auxe` (procps' BSD syntax) and macOS `ps -E` print every process's
    // environment, which routinely holds tokens.
    if inv.program == "ps"
        && (inv.has("-E")
            || inv
                .positionals(flags![
                    "-o", "-O", "-p", "-q", "-C", "-u", "-U", "-g", "-G", "-t", "-s", "-k",
                    "--pid", "--ppid", "--sort", "--format", "--user", "--group", "--cols",
                    "--rows"
                ])
                .iter()
                .any(|w| {
                    let t = w.text.as_bytes();
                    t.first().is_some_and(|b| *b != b'-')
                        && t.iter().all(u8::is_ascii_alphabetic)
                        && t.contains(&b'e')
                }))
    {
        return Classification::new(C::SecretRead).reach(Reach::Machine);
    }
    if inv.program == "journalctl"
        && inv.has_any(flags![
            "--vacuum-size",
            "--vacuum-time",
            "--rotate",
            "--flush"
        ])
    {
        return Classification::new(C::ExecProcess).reversibility(Reversibility::Hard);
    }
    Classification::new(C::ExecInspect).reach(Reach::Machine)
}

fn kill(inv: &Invocation<'_>) -> Classification {
    let positionals = inv.positionals(flags!["-s", "-n", "--signal", "-u", "-U", "-g", "-t"]);
    let sweeping = positionals.iter().any(|w| w.text == "-1" || w.text == "0")
        || inv.args.iter().any(|w| w.text == "-1")
        || inv.program == "killall"
        || inv.has_any(flags!["-u", "-U"]);
    let mut j = Classification::new(C::ExecProcess).reversibility(Reversibility::Hard);
    if sweeping {
        j = j.scale(Scale::Sweeping);
    }
    j
}

fn system_service(inv: &Invocation<'_>) -> Classification {
    // `--user` is a switch (systemctl's user manager), not a value option.
    let sub = inv.sub(flags![
        "-u",
        "-H",
        "--host",
        "-M",
        "--machine",
        "-p",
        "--property",
        "-t",
        "--type",
        "-s",
        "--signal",
        "--state",
        "-n",
        "--lines",
        "-o",
        "--output",
        "--root",
    ]);
    let reading = match inv.program {
        "systemctl" | "service" | "launchctl" | "loginctl" | "sc" => matches!(
            sub.as_str(),
            "status"
                | "list"
                | "list-units"
                | "list-unit-files"
                | "is-active"
                | "is-enabled"
                | "show"
                | "cat"
                | "print"
                | "query"
                | "list-timers"
                | "blame"
                | ""
        ),
        "crontab" => inv.has("-l"),
        "defaults" => matches!(sub.as_str(), "read" | "domains" | "find"),
        "reg" => matches!(sub.as_str(), "query" | "export"),
        "schtasks" => inv.has_any(flags!["/query", "/Query"]),
        "at" | "batch" => inv.has_any(flags!["-l", "-c"]),
        _ => false,
    };
    if reading {
        return Classification::new(C::ExecInspect).reach(Reach::Machine);
    }
    let mut j = Classification::new(C::ExecProcess).reversibility(Reversibility::Hard);
    let persists = matches!(inv.program, "crontab" | "at" | "batch" | "schtasks")
        || matches!(
            sub.as_str(),
            "enable"
                | "load"
                | "bootstrap"
                | "link"
                | "add"
                | "import"
                | "submit"
                | "config"
                | "create"
                | "write"
                | "set-default"
                | "preset"
                | "edit"
                | "daemon-reload"
                | "mask"
        );
    if persists {
        j.persistence = true;
        j.opaque = Some("installs something that runs later without asking".to_string());
    }
    j
}

fn system_admin(inv: &Invocation<'_>) -> Classification {
    let read = match inv.program {
        "mount" => inv.args.is_empty(),
        "iptables" | "ip6tables" | "nft" | "ufw" => {
            inv.has_any(flags!["-L", "--list", "-S", "status"])
                || inv
                    .args
                    .iter()
                    .any(|w| matches!(w.text.as_str(), "list" | "status"))
        }
        "sysctl" => !inv.has("-w") && inv.args.iter().all(|w| !w.text.contains('=')),
        "fdisk" | "parted" => inv.has("-l"),
        "diskutil" => matches!(inv.sub(flags![]).as_str(), "list" | "info"),
        "security" => false,
        _ => false,
    };
    if read {
        return Classification::new(C::ExecInspect).reach(Reach::Machine);
    }
    if inv.program == "security"
        && inv
            .args
            .iter()
            .any(|w| w.text.starts_with("find-") || w.text.starts_with("dump-"))
    {
        return Classification::new(C::SecretRead);
    }
    Classification::new(C::ExecPrivilege).reversibility(Reversibility::Irreversible)
}

/// `python -m MODULE` for modules we know, judged like their own commands.
fn python_module(module: &str, rest: &[crate::shell::lex::Word]) -> Option<Classification> {
    let inv = Invocation {
        program: module,
        args: rest,
        config_keys: &[],
    };
    match module {
        // pytest's options are pytest's whichever way it is started.
        "pytest" => Some(super::packages::test_runner(&inv)),
        "unittest" | "doctest" | "nose2" | "tox" => Some(Classification::new(C::ExecTest)),
        // What the index gives these names: the linters' and pip's entries in the packages
        // table (no other family names them); `pyflakes` and `pycodestyle` are in no table.
        "mypy" | "ruff" | "black" | "isort" | "flake8" | "pylint" | "pyright" | "bandit" => {
            Some(super::packages::linter(&inv))
        }
        "pyflakes" | "pycodestyle" => None,
        "pip" => Some(super::packages::pip(&Invocation {
            program: "pip",
            args: rest,
            config_keys: &[],
        })),
        "venv" | "virtualenv" => Some(
            Classification::new(C::FsWriteWorkspace)
                .with_paths(inv.positionals(flags!["--prompt"]), Access::Write),
        ),
        "build" | "compileall" | "py_compile" | "maturin" | "setuptools_scm" => {
            Some(Classification::new(C::ExecBuild))
        }
        // `json.tool IN OUT`: the second file is written.
        "json.tool" => {
            let files = inv.positionals(flags!["--indent"]);
            let (input, output) = files.split_at(files.len().min(1));
            let mut j = Classification::new(C::FsReadWorkspace)
                .with_paths(input.iter().copied(), Access::Read);
            if !output.is_empty() {
                j.capability = C::FsWriteWorkspace;
                j.blast = C::FsWriteWorkspace.default_blast();
                j = j.with_paths(output.iter().copied(), Access::Write);
            }
            Some(j)
        }
        "http.server" | "SimpleHTTPServer" => {
            Some(Classification::new(C::NetSend).reach(Reach::Network))
        }
        "twine" => Some(Classification::new(C::ExecPkgPublish)),
        "coverage" => None,
        _ => None,
    }
}

fn python(inv: &Invocation<'_>) -> Classification {
    let mut args = inv.args;
    while let Some(first) = args.first() {
        let t = first.text.as_str();
        if t == "-m" {
            let Some(module) = args.get(1) else { break };
            let rest = args.get(2..).unwrap_or(&[]);
            return python_module(&module.text, rest).unwrap_or_else(|| {
                Classification::opaque(
                    C::ExecInterpreter,
                    &format!(
                        "runs the module `{}`, which the engine does not know",
                        module.text
                    ),
                )
            });
        }
        if matches!(t, "-V" | "--version" | "-h" | "--help") {
            return Classification::new(C::ExecInspect);
        }
        if t.starts_with('-') && !t.starts_with("-c") && t != "-" {
            args = args.get(1..).unwrap_or(&[]);
            continue;
        }
        break;
    }
    if args.first().is_some_and(|w| w.text.starts_with("-c")) {
        return Classification::unread(C::ExecInterpreter, "runs inline code");
    }
    match args.first() {
        None => Classification::unread(
            C::ExecInterpreter,
            "an interpreter reading code from its input",
        ),
        Some(dash) if dash.text == "-" => Classification::unread(
            C::ExecInterpreter,
            "an interpreter reading code from its input",
        ),
        Some(script) => {
            Classification::opaque(C::ExecInterpreter, "runs a script the engine has not read")
                .with_paths([script], Access::Execute)
        }
    }
}

fn interpreter(inv: &Invocation<'_>) -> Classification {
    if inv.args.len() == 1 && inv.has_any(flags!["--version", "-v", "-V", "version", "-version"]) {
        return Classification::new(C::ExecInspect);
    }
    if matches!(inv.program, "awk" | "gawk" | "mawk" | "nawk") {
        let positionals = inv.positionals(flags![
            "-F",
            "-v",
            "-f",
            "--field-separator",
            "--assign",
            "-i",
            "--include",
            "-l",
            "--load",
        ]);
        if inv.has_any(flags!["-f", "--file", "-i", "--include", "-E", "--exec"]) {
            return Classification::opaque(C::ExecInterpreter, "runs an awk program from a file")
                .with_paths(
                    inv.any_value(flags!["-f", "--file", "-i", "--include", "-E", "--exec"])
                        .as_ref(),
                    Access::Execute,
                );
        }
        // gawk `-l LIB` loads a shared-library extension.
        if inv.has_any(flags!["-l", "--load"]) {
            return Classification::unread(C::ExecInterpreter, "loads an awk extension library");
        }
        let Some((program, files)) = positionals.split_first() else {
            return Classification::unread(
                C::ExecInterpreter,
                "an awk program read from its input",
            );
        };
        let code = program.text.as_str();
        if !crate::signature::precision::awk_reads_only(code) {
            return Classification::unread(
                C::ExecInterpreter,
                "the awk program runs commands or writes files",
            );
        }
        return Classification::new(C::FsReadWorkspace)
            .with_paths(files.iter().copied(), Access::Read);
    }
    if inv.program == "java" && inv.has("-jar") {
        return Classification::opaque(C::ExecInterpreter, "runs a jar the engine has not read")
            .with_paths(inv.value(flags!["-jar"]), Access::Execute);
    }
    let inline = inv.has_any(flags![
        "-e",
        "-c",
        "--eval",
        "-p",
        "--print",
        "-r",
        "-E",
        "-Command",
        "-command",
        "-EncodedCommand",
        "-enc",
        "/c",
        "/k",
        "-x",
    ]);
    if inline {
        return Classification::unread(C::ExecInterpreter, "runs inline code");
    }
    let script = inv
        .positionals(flags![
            "-r",
            "--require",
            "-I",
            "--import",
            "--loader",
            "-cp",
            "-classpath",
            "--class-path",
        ])
        .first()
        .map(|w| (*w).clone());
    match script {
        Some(script) => {
            Classification::opaque(C::ExecInterpreter, "runs a script the engine has not read")
                .with_paths([&script], Access::Execute)
        }
        None => Classification::unread(
            C::ExecInterpreter,
            "an interpreter reading code from its input",
        ),
    }
}

fn sourced(inv: &Invocation<'_>) -> Classification {
    // The shell reads and runs the file: it is read, and its code is unread.
    Classification::opaque(
        C::ExecInterpreter,
        "sources a script the engine has not read",
    )
    .with_paths(inv.args.first(), Access::Execute)
}
