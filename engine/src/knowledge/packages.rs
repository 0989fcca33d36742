//! Package managers, build tools, test runners, linters and compilers, for JS, Python, Rust,
//! Go, Java/Kotlin, .NET, Ruby, PHP and system packages.
//!
//! `npm run <script>` is judged by the script's name: test-like and build-like names are
//! learnable, any other name is opaque (the script could be anything). Installing or publishing
//! is never routine: installs run other people's code, publishes cannot be taken back.

use super::classification::{Classification, Invocation, Judge};
use crate::model::{Access, Capability as C, Reach, Reversibility, Scale};
use crate::static_index::{Names, flags, name_set};

pub(super) const TABLE: &[(&[&str], Judge)] = &[
    (&["npm", "pnpm", "yarn", "bun", "cnpm"], js),
    (&["pip", "pip3", "pipx", "easy_install"], pip),
    (
        &[
            "uv",
            "poetry",
            "pipenv",
            "pdm",
            "hatch",
            "rye",
            "conda",
            "mamba",
            "micromamba",
            "pixi",
        ],
        python_project,
    ),
    (&["cargo"], cargo),
    (&["rustup"], rustup),
    (&["go"], go),
    (
        &["mvn", "mvnw", "gradle", "gradlew", "sbt", "lein", "ant"],
        jvm,
    ),
    (&["dotnet", "nuget", "msbuild"], dotnet),
    (&["composer"], composer),
    (&["gem", "bundle", "bundler"], ruby),
    (
        &[
            "apt", "apt-get", "aptitude", "dpkg", "brew", "yum", "dnf", "pacman", "apk", "port",
            "snap", "flatpak", "choco", "winget", "scoop", "zypper", "nix-env", "nix", "rpm",
        ],
        system_packages,
    ),
    (
        &[
            "make", "gmake", "just", "task", "rake", "invoke", "nox", "scons", "mage", "earthly",
            "bazel", "bazelisk", "buck", "buck2", "pants",
        ],
        task_runner,
    ),
    (
        &[
            "cmake",
            "ninja",
            "meson",
            "autoreconf",
            "configure",
            "xcodebuild",
            "swift",
        ],
        build_system,
    ),
    (
        &[
            "pytest",
            "py.test",
            "jest",
            "vitest",
            "mocha",
            "ava",
            "rspec",
            "phpunit",
            "karma",
            "tap",
            "bats",
            "ctest",
            "cargo-nextest",
            "tox",
            "nyc",
            "c8",
            "pest",
            "minitest",
            "unittest",
            "behave",
            "cucumber",
            "hypothesis",
            "coverage",
        ],
        test_runner,
    ),
    (&["playwright", "cypress"], browser_tests),
    (
        &[
            "eslint",
            "prettier",
            "ruff",
            "black",
            "isort",
            "flake8",
            "pylint",
            "mypy",
            "pyright",
            "tsc",
            "rustfmt",
            "gofmt",
            "goimports",
            "shellcheck",
            "shfmt",
            "hadolint",
            "yamllint",
            "markdownlint",
            "stylelint",
            "biome",
            "golangci-lint",
            "rubocop",
            "swiftlint",
            "ktlint",
            "clang-format",
            "clang-tidy",
            "cargo-clippy",
            "clippy-driver",
            "taplo",
            "dprint",
            "oxlint",
            "standard",
            "xo",
            "vale",
            "codespell",
            "typos",
            "actionlint",
            "tflint",
            "buf",
            "sqlfluff",
            "djlint",
            "autopep8",
            "yapf",
            "pydocstyle",
            "bandit",
            "semgrep",
            "deno",
        ],
        linter,
    ),
    (
        &[
            "gcc",
            "g++",
            "cc",
            "c++",
            "clang",
            "clang++",
            "rustc",
            "javac",
            "swiftc",
            "kotlinc",
            "zig",
            "tinygo",
            "ld",
            "as",
            "nasm",
            "esbuild",
            "webpack",
            "rollup",
            "vite",
            "parcel",
            "turbo",
            "nx",
            "lerna",
            "next",
            "tsup",
            "swc",
            "babel",
            "sass",
            "lessc",
            "postcss",
            "tailwindcss",
            "wasm-pack",
            "trunk",
            "maturin",
            "protoc",
        ],
        compiler,
    ),
];

name_set! {
    static TEST_SCRIPTS = &[
        "test",
        "tests",
        "t",
        "tst",
        "lint",
        "typecheck",
        "type-check",
        "types",
        "tsc",
        "check",
        "e2e",
        "coverage",
        "cov",
        "verify",
        "validate",
        "spec",
        "unit",
        "integration",
        "ci",
        "format:check",
        "fmt:check",
        "prettier:check",
        "lint:fix",
        "audit",
    ];
}

name_set! {
    static BUILD_SCRIPTS = &[
        "build",
        "compile",
        "bundle",
        "format",
        "fmt",
        "prettier",
        "assemble",
        "dist",
        "dev",
        "start",
        "serve",
        "preview",
        "watch",
        "generate",
        "codegen",
        "docs",
        "storybook",
        "clean",
        "package",
    ];
}

fn script_kind(name: &str) -> Option<C> {
    let lower = name.to_ascii_lowercase();
    let head = lower.split([':', '-', '.']).next().unwrap_or(&lower);
    if TEST_SCRIPTS.contains(&lower) || TEST_SCRIPTS.contains(head) && head != "ci" {
        Some(C::ExecTest)
    } else if BUILD_SCRIPTS.contains(&lower) || BUILD_SCRIPTS.contains(head) {
        Some(C::ExecBuild)
    } else {
        None
    }
}

/// A package script judged by its name.
fn script(name: &str) -> Classification {
    match script_kind(name) {
        Some(kind) => Classification::new(kind),
        None => Classification::opaque(
            C::ExecUnknown,
            &format!("runs the package script `{name}`, which could be anything"),
        ),
    }
}

/// `--prefix`/`--dir`/`-C` point a tool at another project: its code runs.
fn other_project(inv: &Invocation<'_>, flags: Names<'_>, mut j: Classification) -> Classification {
    if let Some(dir) = inv.any_value(flags) {
        j.targets.push((dir, Access::Execute));
    }
    j
}

fn js(inv: &Invocation<'_>) -> Classification {
    let valued = flags![
        "--prefix",
        "-C",
        "--dir",
        "--cwd",
        "-w",
        "--workspace",
        "--filter",
        "-F",
        "--registry",
        "--tag",
        "--otp",
        "--access",
        "--loglevel",
    ];
    // `bun -e CODE` and `bun -p CODE` evaluate the code itself.
    if inv.program == "bun" && inv.has_any(flags!["-e", "--eval", "-p", "--print"]) {
        return Classification::opaque(
            C::ExecInterpreter,
            "evaluates code given on the command line",
        );
    }
    // The shell scripts run in and the options node starts with are code.
    if let Some(option) = inv.args.iter().find(|w| {
        let t = w.text.as_str();
        [
            "--script-shell",
            "--node-options",
            "--shell",
            "--userconfig",
            "--globalconfig",
        ]
        .iter()
        .any(|f| {
            t.strip_prefix(f)
                .is_some_and(|r| r.is_empty() || r.starts_with('='))
        })
    }) {
        return Classification::unread(
            C::ExecUnknown,
            &format!(
                "`{}` changes the program npm runs scripts with",
                option.text.split('=').next().unwrap_or("")
            ),
        );
    }
    let (sub, arg) = inv.first_positionals(valued);
    let j = match sub {
        "" | "install" | "i" | "ci" | "add" | "remove" | "rm" | "uninstall" | "un" | "update"
        | "up" | "upgrade" | "dedupe" | "prune" | "rebuild" | "link" | "ln" | "unlink"
        | "import" => {
            if sub.is_empty()
                && inv.program != "yarn"
                && inv.program != "bun"
                && inv.program != "pnpm"
            {
                Classification::new(C::ExecInspect)
            } else {
                let mut j = Classification::new(C::ExecPkg);
                if inv.has_any(flags!["-g", "--global", "--location=global"]) {
                    j = j.reversibility(Reversibility::Hard);
                }
                j
            }
        }
        "test" | "t" | "tst" => Classification::new(C::ExecTest),
        "run" | "run-script" | "rum" | "urn" => {
            if inv.program == "bun" && (arg.contains('.') || arg.contains('/')) {
                Classification::opaque(
                    C::ExecInterpreter,
                    "runs a script file the engine has not read",
                )
            } else {
                script(arg)
            }
        }
        "start" | "stop" | "restart" => script(sub),
        "publish" | "unpublish" | "deprecate" | "dist-tag" | "owner" | "access" | "team" => {
            Classification::new(C::ExecPkgPublish)
        }
        "login" | "adduser" | "logout" | "token" | "whoami" => {
            Classification::opaque(C::SecretRead, "handles registry credentials")
        }
        "pack" | "version" if arg.is_empty() || sub == "pack" => Classification::new(C::ExecBuild),
        "version" => Classification::new(C::ExecVcsWrite),
        "ls" | "list" | "ll" | "la" | "outdated" | "view" | "info" | "show" | "why" | "explain"
        | "search" | "docs" | "help" | "root" | "bin" | "prefix" | "doctor" | "fund"
        | "licenses" | "query" | "sbom" => Classification::new(C::ExecInspect),
        "audit" if arg == "fix" => Classification::new(C::ExecPkg),
        "audit" => Classification::new(C::NetFetch),
        "config" | "set" | "get" | "c" => {
            if matches!(arg, "get" | "list" | "ls" | "") || sub == "get" {
                Classification::new(C::ExecInspect)
            } else {
                Classification::new(C::FsWriteOutside).reach(Reach::Machine)
            }
        }
        "init" | "create" => Classification::opaque(C::ExecUnknown, "runs an initializer package"),
        "exec" | "x" | "dlx" => {
            Classification::opaque(C::ExecUnknown, "fetches a package and runs it")
        }
        "cache" => Classification::new(C::ExecPkg),
        "workspaces" | "workspace" => {
            Classification::opaque(C::ExecUnknown, "runs a command in another workspace")
        }
        // yarn, pnpm and bun run scripts by bare name.
        other if inv.program != "npm" => {
            if inv.program == "bun" && (other.contains('.') || other.contains('/')) {
                Classification::opaque(
                    C::ExecInterpreter,
                    "runs a script file the engine has not read",
                )
            } else {
                script(other)
            }
        }
        other => {
            Classification::opaque(C::ExecUnknown, &format!("an unknown npm command `{other}`"))
        }
    };
    let j = if inv.has_any(flags![
        "-r",
        "--recursive",
        "--workspaces",
        "--filter",
        "-ws"
    ]) {
        j.scale(Scale::Many)
    } else {
        j
    };
    let j = other_project(inv, flags!["--workspace", "-w"], j);
    other_project(inv, flags!["--prefix", "-C", "--dir", "--cwd"], j)
}

pub(super) fn pip(inv: &Invocation<'_>) -> Classification {
    let sub = inv.sub(flags![
        "-r",
        "--requirement",
        "-c",
        "--constraint",
        "-i",
        "--index-url",
        "--extra-index-url",
        "-t",
        "--target",
        "--python",
    ]);
    let mut j = match sub.as_str() {
        "install" | "uninstall" | "download" | "wheel" | "inject" | "upgrade" | "reinstall" => {
            let mut j = Classification::new(C::ExecPkg);
            if let Some(target) = inv.any_value(flags!["-t", "--target", "--prefix", "--root"]) {
                j.targets.push((target, Access::Write));
            }
            j
        }
        "run" => Classification::opaque(C::ExecUnknown, "fetches a package and runs it"),
        "list" | "show" | "freeze" | "check" | "inspect" | "debug" | "help" | "index"
        | "search" | "cache" | "hash" | "" => Classification::new(C::ExecInspect),
        "config" => Classification::new(C::FsWriteOutside),
        _ => Classification::opaque(C::ExecUnknown, "an unknown pip command"),
    };
    // `--python X` re-runs pip under the interpreter X.
    if let Some(python) = inv.any_value(flags!["--python"]) {
        j.targets.push((python, Access::Execute));
    }
    j
}

fn python_project(inv: &Invocation<'_>) -> Classification {
    let valued = flags![
        "-p",
        "--python",
        "--directory",
        "--project",
        "-n",
        "--name",
        "-e",
        "--env",
        "--with",
        "--group",
        "--extra",
        "-C",
    ];
    let (sub, arg) = inv.first_positionals(valued);
    let j = match sub {
        "pip" => {
            let rest: Vec<_> = inv
                .args
                .iter()
                .skip_while(|w| w.text != "pip")
                .skip(1)
                .cloned()
                .collect();
            return pip(&Invocation {
                program: "pip",
                args: &rest,
                config_keys: &[],
            });
        }
        "sync" | "add" | "remove" | "install" | "update" | "upgrade" | "lock" | "create"
        | "env" | "venv" | "self" | "python" | "toolchain" => {
            if sub == "venv" || (sub == "env" && arg == "use") {
                Classification::new(C::FsWriteWorkspace)
            } else if sub == "lock" && inv.has("--check") {
                Classification::new(C::ExecTest)
            } else {
                Classification::new(C::ExecPkg)
            }
        }
        "tool" if matches!(arg, "run") => {
            Classification::opaque(C::ExecUnknown, "fetches a package and runs it")
        }
        "tool" if matches!(arg, "list" | "dir") => Classification::new(C::ExecInspect),
        "tool" => Classification::new(C::ExecPkg),
        "build" => Classification::new(C::ExecBuild),
        "publish" | "upload" => Classification::new(C::ExecPkgPublish),
        "show" | "check" | "tree" | "list" | "info" | "version" | "search" | "graph" | "help"
        | "--version" | "config"
            if sub != "config" || arg.is_empty() =>
        {
            Classification::new(C::ExecInspect)
        }
        "test" => Classification::new(C::ExecTest),
        "init" | "new" => Classification::new(C::FsWriteWorkspace),
        "shell" | "activate" => Classification::opaque(C::ExecUnknown, "an interactive shell"),
        _ => Classification::opaque(
            C::ExecUnknown,
            &format!("an unknown `{}` command", inv.program),
        ),
    };
    other_project(inv, flags!["--directory", "--project", "-C"], j)
}

fn cargo(inv: &Invocation<'_>) -> Classification {
    if inv.has("--config") || inv.args.iter().any(|w| w.text.starts_with("--config=")) {
        return Classification::unread(
            C::ExecUnknown,
            "`--config` can point cargo at other programs",
        );
    }
    // `cargo +name` runs another toolchain; one rustup installs by channel is the machine's own.
    if let Some(toolchain) = inv
        .args
        .first()
        .and_then(|w| w.text.strip_prefix('+'))
        .filter(|t| !official_toolchain(t))
    {
        return Classification::unread(
            C::ExecUnknown,
            &format!("`+{toolchain}` runs a toolchain the engine does not know"),
        );
    }
    let valued = flags![
        "-p",
        "--package",
        "--bin",
        "--example",
        "--test",
        "--bench",
        "--features",
        "-F",
        "--target",
        "--target-dir",
        "-j",
        "--jobs",
        "--profile",
        "--manifest-path",
        "-Z",
        "--color",
        "--message-format",
        "--exclude",
    ];
    let positionals: Vec<_> = inv
        .positionals(valued)
        .into_iter()
        .filter(|w| !w.text.starts_with('+'))
        .collect();
    let sub = positionals.first().map(|w| w.text.as_str()).unwrap_or("");
    let j = match sub {
        "test" | "t" | "nextest" | "check" | "c" | "clippy" | "bench" | "miri" | "deny"
        | "audit" | "machete" | "shear" | "udeps" | "hack" | "semver-checks" | "insta"
        | "llvm-cov" | "tarpaulin" | "mutants" | "outdated" => {
            if sub == "clippy" && inv.has("--fix") {
                Classification::new(C::ExecBuild)
            } else {
                Classification::new(C::ExecTest)
            }
        }
        "fmt" => {
            if inv.has("--check") {
                Classification::new(C::ExecTest)
            } else {
                Classification::new(C::ExecBuild)
            }
        }
        "build" | "b" | "doc" | "d" | "run" | "r" | "clean" | "fix" | "expand" | "rustc"
        | "rustdoc" | "vendor" | "generate-lockfile" | "package" | "xtask" => {
            Classification::new(C::ExecBuild)
        }
        "add" | "remove" | "rm" | "update" | "fetch" | "upgrade" => Classification::new(C::ExecPkg),
        "install" | "uninstall" | "binstall" => {
            Classification::new(C::ExecPkg).reversibility(Reversibility::Hard)
        }
        "publish" | "yank" | "owner" | "login" | "logout" => Classification::new(C::ExecPkgPublish),
        "tree" | "metadata" | "search" | "info" | "version" | "locate-project" | "pkgid"
        | "verify-project" | "read-manifest" | "help" | "" => Classification::new(C::ExecInspect),
        "new" | "init" => Classification::new(C::FsWriteWorkspace),
        other => Classification::opaque(
            C::ExecUnknown,
            &format!("`cargo {other}` runs a plugin the engine does not know"),
        ),
    };
    let mut j = j;
    // Artifacts copied out, and libtest's log after `--`.
    if let Some(dir) = inv.any_value(flags!["--artifact-dir", "--out-dir"]) {
        j.targets.push((dir, Access::Write));
    }
    if let Some(at) = inv.args.iter().position(|w| w.text == "--") {
        let after = Invocation {
            program: inv.program,
            args: inv.args.get(at + 1..).unwrap_or(&[]),
            config_keys: &[],
        };
        if let Some(log) = after.any_value(flags!["--logfile"]) {
            j.targets.push((log, Access::Write));
        }
    }
    // Build output lands in `--target-dir`, and `cargo clean` deletes it whole.
    if let Some(dir) = inv.any_value(flags!["--target-dir"]) {
        let access = if sub == "clean" {
            Access::Delete
        } else {
            Access::Write
        };
        j.targets.push((dir, access));
    }
    other_project(inv, flags!["--manifest-path"], j)
}

/// A toolchain rustup installs by name: a channel (`stable`, `nightly-2024-01-01`) or a version
/// (`1.75`, `1.75.0`), optionally with a host triple.
fn official_toolchain(name: &str) -> bool {
    let channel = name.split('-').next().unwrap_or("");
    matches!(channel, "stable" | "beta" | "nightly")
        || !channel.is_empty() && channel.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

fn rustup(inv: &Invocation<'_>) -> Classification {
    match inv.sub(flags![]).as_str() {
        "show" | "which" | "doc" | "--version" | "help" | "" => Classification::new(C::ExecInspect),
        "run" => Classification::opaque(C::ExecUnknown, "runs a program with a toolchain"),
        _ => Classification::new(C::ExecPkg),
    }
}

fn go(inv: &Invocation<'_>) -> Classification {
    let (sub, arg) = inv.first_positionals(flags![
        "-o",
        "-run",
        "-tags",
        "-ldflags",
        "-gcflags",
        "-mod",
        "-C",
        "-exec",
        "-toolexec",
        "-p",
        "-timeout",
        "-count",
        "-bench",
        "-coverprofile",
        "-vettool",
    ]);
    // Go accepts `-flag`, `--flag` and either with `=value`.
    let go_flag = |name: &str| {
        inv.args.iter().take_while(|w| w.text != "--").any(|w| {
            let bare = w.text.trim_start_matches('-');
            w.text.starts_with('-')
                && (bare == name || bare.strip_prefix(name).is_some_and(|r| r.starts_with('=')))
        })
    };
    if ["exec", "toolexec", "vettool"].into_iter().any(go_flag) {
        return Classification::opaque(C::ExecUnknown, "runs the build through another program");
    }
    let j = match sub {
        "test" | "vet" => Classification::new(C::ExecTest),
        "build" | "fmt" | "doc" | "clean" | "tool"
            if sub != "tool" || matches!(arg, "cover" | "pprof" | "vet") =>
        {
            Classification::new(C::ExecBuild)
        }
        "run" if arg.contains('@') => {
            Classification::opaque(C::ExecUnknown, "fetches a module and runs it")
        }
        "run" => Classification::new(C::ExecBuild),
        // `go env -w` persists settings (GOFLAGS=-toolexec=…) that every later build obeys.
        "env" if go_flag("w") || go_flag("u") => {
            let mut j = Classification::new(C::FsWriteOutside)
                .reach(Reach::Machine)
                .reversibility(Reversibility::Hard);
            j.persistence = true;
            j
        }
        "list" | "version" | "env" | "help" => Classification::new(C::ExecInspect),
        "mod" if matches!(arg, "graph" | "why" | "verify") => Classification::new(C::ExecInspect),
        "mod" | "get" | "work" => Classification::new(C::ExecPkg),
        "install" => Classification::new(C::ExecPkg).reversibility(Reversibility::Hard),
        "generate" => Classification::opaque(
            C::ExecUnknown,
            "runs the commands written in `//go:generate` lines",
        ),
        _ => Classification::opaque(C::ExecUnknown, "an unknown go command"),
    };
    let mut j = j;
    if let Some(out) = inv.any_value(flags!["-o"]) {
        j.targets.push((out, Access::Write));
    }
    other_project(inv, flags!["-C"], j)
}

fn jvm(inv: &Invocation<'_>) -> Classification {
    let positionals = inv.positionals(flags![
        "-f",
        "--file",
        "-p",
        "--project-dir",
        "-D",
        "-P",
        "-s",
        "--settings",
        "-b",
        "--build-file",
        "-x",
        "--exclude-task",
        "-pl",
        "--projects",
    ]);
    let tasks: Vec<String> = positionals
        .iter()
        .map(|w| w.text.to_ascii_lowercase())
        .collect();
    if tasks.is_empty() {
        return Classification::new(C::ExecBuild);
    }
    let mut worst = C::ExecInspect;
    for task in &tasks {
        let name = task.rsplit(':').next().unwrap_or(task);
        let kind = match name {
            "test" | "check" | "verify" | "lint" | "spotbugs" | "checkstyle" | "pmd" | "detekt"
            | "ktlintcheck" | "spotlesscheck" | "integrationtest" | "connectedcheck" => C::ExecTest,
            "compile" | "build" | "assemble" | "package" | "clean" | "jar" | "war" | "classes"
            | "testclasses" | "compilejava" | "compilekotlin" | "javadoc" | "spotlessapply"
            | "shadowjar" | "bootjar" | "installdist" | "process-resources" | "test-compile"
            | "validate" | "initialize" => C::ExecBuild,
            "dependencies" | "tasks" | "projects" | "properties" | "help" | "tree"
            | "dependencyinsight" | "outdated" | "effective-pom" | "--version" | "-v" => {
                C::ExecInspect
            }
            "install" => C::ExecPkg,
            "deploy" | "publish" | "release" | "publishtomavenlocal" | "uploadarchives" => {
                C::ExecPkgPublish
            }
            _ => {
                return Classification::opaque(
                    C::ExecUnknown,
                    &format!("the build task `{task}` could be anything"),
                );
            }
        };
        worst = worst.max_by_risk(kind);
    }
    Classification::new(worst)
}

trait ByRisk {
    fn max_by_risk(self, other: C) -> C;
}

impl ByRisk for C {
    fn max_by_risk(self, other: C) -> C {
        if other.default_blast().tier() > self.default_blast().tier()
            || (self == C::ExecInspect && other != C::ExecInspect)
        {
            other
        } else {
            self
        }
    }
}

fn dotnet(inv: &Invocation<'_>) -> Classification {
    let positionals = inv.positionals(flags![
        "-c",
        "--configuration",
        "-f",
        "--framework",
        "-o",
        "--output",
        "-r",
        "--runtime",
        "-p",
        "--project",
        "-v",
        "--verbosity",
        "-s",
        "--source",
    ]);
    let sub = positionals
        .first()
        .map(|w| w.text.to_ascii_lowercase())
        .unwrap_or_default();
    let arg = positionals
        .get(1)
        .map(|w| w.text.to_ascii_lowercase())
        .unwrap_or_default();
    match (inv.program, sub.as_str()) {
        (_, "test" | "vstest") => Classification::new(C::ExecTest),
        (_, "format") if inv.has("--verify-no-changes") => Classification::new(C::ExecTest),
        (
            _,
            "build" | "run" | "publish" | "pack" | "clean" | "format" | "restore" | "msbuild"
            | "watch",
        ) => Classification::new(C::ExecBuild),
        (_, "add") if arg == "package" || arg == "reference" => Classification::new(C::ExecPkg),
        (_, "list" | "--info" | "--version" | "--list-sdks" | "sln" | "help" | "") => {
            Classification::new(C::ExecInspect)
        }
        (_, "new") => Classification::new(C::FsWriteWorkspace),
        (_, "tool") if arg == "run" => Classification::opaque(C::ExecUnknown, "runs a .NET tool"),
        (_, "tool" | "workload") => Classification::new(C::ExecPkg),
        (_, "nuget" | "push") => Classification::new(C::ExecPkgPublish),
        (_, "ef") => Classification::new(C::ExecDb),
        ("msbuild", _) => Classification::new(C::ExecBuild),
        _ => Classification::opaque(C::ExecUnknown, "an unknown dotnet command"),
    }
}

fn composer(inv: &Invocation<'_>) -> Classification {
    let (sub, arg) = inv.first_positionals(flags!["-d", "--working-dir"]);
    let j = match sub {
        "install" | "update" | "require" | "remove" | "upgrade" | "reinstall" => {
            Classification::new(C::ExecPkg)
        }
        "test" => Classification::new(C::ExecTest),
        "run-script" | "run" => script(arg),
        "dump-autoload" | "dumpautoload" | "validate" => Classification::new(C::ExecBuild),
        "show" | "outdated" | "licenses" | "depends" | "why" | "why-not" | "audit" | "info"
        | "search" | "diagnose" | "" => Classification::new(C::ExecInspect),
        other => script(other),
    };
    other_project(inv, flags!["-d", "--working-dir"], j)
}

fn ruby(inv: &Invocation<'_>) -> Classification {
    let sub = inv.sub(flags!["-v", "--version", "--gemfile", "-j", "--jobs"]);
    match sub.as_str() {
        "install" | "update" | "add" | "remove" | "uninstall" | "lock" | "pristine" | "cleanup"
        | "" => Classification::new(C::ExecPkg),
        "push" | "yank" | "owner" | "signin" => Classification::new(C::ExecPkgPublish),
        "list" | "info" | "show" | "outdated" | "check" | "search" | "contents" | "env"
        | "which" | "help" | "specification" | "doctor" => Classification::new(C::ExecInspect),
        "build" => Classification::new(C::ExecBuild),
        _ => Classification::opaque(C::ExecUnknown, "an unknown gem or bundler command"),
    }
}

fn system_packages(inv: &Invocation<'_>) -> Classification {
    let sub = inv.sub(flags!["-o", "-t", "--target-release", "-c"]);
    match sub.as_str() {
        "search" | "show" | "info" | "list" | "policy" | "depends" | "rdepends" | "madison"
        | "query" | "-q" | "-l" | "-s" | "--version" | "doctor" | "config" | "leaves" | "deps"
        | "uses" | "outdated" | "home" | "desc" | "" => Classification::new(C::ExecInspect),
        "update" if matches!(inv.program, "apt" | "apt-get" | "aptitude") => {
            Classification::new(C::ExecPkg)
        }
        "services" => Classification::new(C::ExecProcess).reversibility(Reversibility::Hard),
        _ => Classification::new(C::ExecPkg)
            .reach(Reach::Machine)
            .reversibility(Reversibility::Hard),
    }
}

fn task_runner(inv: &Invocation<'_>) -> Classification {
    let positionals = inv.positionals(flags![
        "-f",
        "--file",
        "-C",
        "--directory",
        "-j",
        "--jobs",
        "-t",
        "--target",
    ]);
    let verb = positionals.first().map(|w| w.text.as_str()).unwrap_or("");
    let make = matches!(inv.program, "make" | "gmake");
    if matches!(inv.program, "bazel" | "bazelisk") {
        return match verb {
            "test" | "coverage" => Classification::new(C::ExecTest),
            "build" | "query" | "cquery" | "aquery" | "info" | "version" | "clean" | "fetch" => {
                Classification::new(C::ExecBuild)
            }
            _ => Classification::opaque(C::ExecUnknown, "runs a bazel target"),
        };
    }
    // make's `-l N` is a load limit, not a listing: the recipes still run.
    if (inv.has_any(flags![
        "-n",
        "--dry-run",
        "--just-print",
        "--list",
        "--summary",
        "--help",
        "--version",
    ]) || inv.has("-l") && !make)
        && inv.program != "nox"
    {
        return Classification::new(C::ExecInspect);
    }
    Classification::opaque(
        C::ExecUnknown,
        &format!(
            "`{}` runs recipes written in a file the engine has not read",
            inv.program
        ),
    )
}

fn build_system(inv: &Invocation<'_>) -> Classification {
    let sub = inv.sub(flags![
        "-B",
        "-S",
        "-G",
        "-D",
        "-C",
        "-j",
        "--target",
        "--config",
        "-scheme",
        "-project",
        "-workspace",
    ]);
    match (inv.program, sub.as_str()) {
        ("swift", "test") | ("xcodebuild", "test") => Classification::new(C::ExecTest),
        ("swift", "build" | "package") => Classification::new(C::ExecBuild),
        ("swift", "run") => Classification::new(C::ExecBuild),
        ("swift", _) => Classification::opaque(
            C::ExecInterpreter,
            "runs Swift code the engine has not read",
        ),
        ("cmake", _) if inv.has("-P") || inv.has("-E") => {
            Classification::opaque(C::ExecUnknown, "cmake runs a script or a command")
        }
        ("meson", "test") => Classification::new(C::ExecTest),
        ("configure", _) => {
            Classification::opaque(C::ExecUnknown, "a configure script the engine has not read")
        }
        _ => Classification::new(C::ExecBuild),
    }
}

pub(super) fn test_runner(inv: &Invocation<'_>) -> Classification {
    let mut j = Classification::new(C::ExecTest);
    if matches!(inv.program, "pytest" | "py.test") {
        j = pytest(inv, j);
    }
    // pytest deletes its base temporary directory before the run.
    if let Some(base) = inv.any_value(flags!["--basetemp"]) {
        j.targets.push((base, Access::Delete));
    }
    if let Some(root) = inv.any_value(flags![
        "--rootdir",
        "-c",
        "--config",
        "--confcutdir",
        "--config-file",
    ]) {
        j.targets.push((root, Access::Execute));
    }
    if inv.program == "coverage" && inv.sub(flags![]) == "run" {
        return Classification::opaque(C::ExecInterpreter, "runs a program under coverage");
    }
    j
}

/// pytest's options that write files, load code or point it elsewhere; its operands are the
/// tests it runs.
fn pytest(inv: &Invocation<'_>, mut j: Classification) -> Classification {
    let valued = flags![
        "-k",
        "-m",
        "-p",
        "-o",
        "--override-ini",
        "-c",
        "--config-file",
        "--rootdir",
        "--basetemp",
        "--confcutdir",
        "-W",
        "--pythonwarnings",
        "--maxfail",
        "--tb",
        "-n",
        "--numprocesses",
        "--durations",
        "--junitxml",
        "--junit-xml",
        "--log-file",
        "--result-log",
        "--report-log",
        "--html",
        "--json-report-file",
        "--cov",
        "--cov-report",
        "--cov-config",
        "--log-level",
        "--log-cli-level",
        "--import-mode",
        "--deselect",
        "--ignore",
        "--ignore-glob",
        "-r",
        "--capture",
        "--color",
        "--dist",
        "--timeout",
        "--count",
    ];
    for word in inv.positionals(valued) {
        // `tests/test_x.py::test_a` runs the file's code.
        let mut path = word.clone();
        if let Some((file, _)) = path.text.split_once("::") {
            path.set_text(file.to_string());
        }
        j.targets.push((path, Access::Execute));
    }
    const OUTPUTS: [&str; 9] = [
        "--junitxml",
        "--junit-xml",
        "--log-file",
        "--result-log",
        "--resultlog",
        "--report-log",
        "--html",
        "--json-report-file",
        "--debug",
    ];
    let mut words = inv.args.iter().peekable();
    while let Some(word) = words.next() {
        let t = word.text.as_str();
        for flag in OUTPUTS {
            let value = if t == flag {
                words
                    .peek()
                    .filter(|w| !w.text.starts_with('-'))
                    .map(|w| w.text.to_string())
            } else {
                t.strip_prefix(flag)
                    .and_then(|r| r.strip_prefix('='))
                    .map(str::to_string)
            };
            if let Some(value) = value {
                let mut out = word.clone();
                out.set_text(value);
                j.targets.push((out, Access::Write));
            }
        }
    }
    if let Some(report) = inv.any_value(flags!["--cov-report"])
        && let Some((_, path)) = report.text.split_once(':')
        && !path.is_empty()
    {
        let mut out = report.clone();
        out.set_text(path.to_string());
        j.targets.push((out, Access::Write));
    }
    if let Some(config) = inv.any_value(flags!["--cov-config"]) {
        j.targets.push((config, Access::Execute));
    }
    // `-p NAME` loads a plugin; `-o key=value` overrides the ini file: where the cache goes, or
    // options that load code.
    let mut words = inv.args.iter().peekable();
    while let Some(word) = words.next() {
        let t = word.text.as_str();
        let value = match t {
            "-o" | "--override-ini" | "-p" => words.peek().map(|w| w.text.as_str()),
            _ => t
                .strip_prefix("--override-ini=")
                .or_else(|| t.strip_prefix("-o").filter(|v| !v.is_empty()))
                .or_else(|| t.strip_prefix("-p").filter(|v| !v.is_empty())),
        };
        let Some(value) = value else { continue };
        if t.starts_with("-p") {
            if !value.starts_with("no:") {
                return j.runs_unread(&format!("loads the pytest plugin `{value}`"));
            }
            continue;
        }
        let (key, setting) = value.split_once('=').unwrap_or((value, ""));
        match key.trim() {
            "cache_dir" => {
                let mut out = word.clone();
                out.set_text(setting.to_string());
                j.targets.push((out, Access::Write));
            }
            "addopts"
            | "plugins"
            | "required_plugins"
            | "pythonpath"
            | "python_files"
            | "filterwarnings"
            | "usefixtures"
            | "env"
            | "consider_namespace_packages" => {
                return j.runs_unread(&format!("`-o {key}=` makes pytest load other code"));
            }
            _ => {}
        }
    }
    j
}

fn browser_tests(inv: &Invocation<'_>) -> Classification {
    match inv
        .sub(flags![
            "-c",
            "--config",
            "--project",
            "-g",
            "--grep",
            "--reporter",
            "--browser",
            "--spec",
        ])
        .as_str()
    {
        "test" | "run" => Classification::new(C::ExecTest),
        "show-report" | "show-trace" | "--version" => Classification::new(C::ExecInspect),
        "install" => Classification::new(C::ExecPkg),
        "codegen" | "open" => {
            Classification::opaque(C::ExecUnknown, "opens an interactive browser")
        }
        _ => Classification::opaque(C::ExecUnknown, "an unknown browser-test command"),
    }
}

pub(super) fn linter(inv: &Invocation<'_>) -> Classification {
    if inv.program == "deno" {
        return match inv
            .sub(flags!["-A", "--allow-all", "--config", "-c"])
            .as_str()
        {
            "test" | "lint" | "check" | "bench" => Classification::new(C::ExecTest),
            "fmt" if inv.has("--check") => Classification::new(C::ExecTest),
            "fmt" | "compile" | "bundle" | "doc" | "cache" | "info" => {
                Classification::new(C::ExecBuild)
            }
            "install" | "add" | "remove" | "upgrade" => Classification::new(C::ExecPkg),
            _ => Classification::opaque(C::ExecInterpreter, "runs code the engine has not read"),
        };
    }
    let writes = inv.has_any(flags![
        "--fix",
        "--write",
        "-w",
        "--in-place",
        "-i",
        "--apply",
        "-a",
        "--autocorrect",
        "-A",
        "--fix-only",
    ]) || matches!(
        inv.program,
        "black"
            | "isort"
            | "autopep8"
            | "yapf"
            | "shfmt"
            | "dprint"
            | "rustfmt"
            | "clang-format"
            | "goimports"
    ) && !inv.has_any(flags!["--check", "--diff", "-d", "-l", "--dry-run"])
        || (inv.program == "ruff"
            && inv.sub(flags!["--config"]) == "format"
            && !inv.has_any(flags!["--check", "--diff"]))
        || (inv.program == "biome"
            && matches!(inv.sub(flags![]).as_str(), "format" | "check")
            && inv.has("--write"));
    if inv.program == "tsc" && !inv.has_any(flags!["--noEmit", "--noemit"]) {
        return Classification::new(C::ExecBuild);
    }
    if writes {
        Classification::new(C::ExecBuild)
    } else {
        Classification::new(C::ExecTest)
    }
}

fn compiler(inv: &Invocation<'_>) -> Classification {
    if inv.program == "lerna" {
        let positionals = inv.positionals(flags!["--scope", "--ignore", "--concurrency"]);
        match positionals.first().map(|w| w.text.as_str()) {
            // `lerna exec -- CMD` runs CMD in every package.
            Some("exec") => {
                return Classification::opaque(C::ExecUnknown, "runs a command in every package")
                    .scale(Scale::Many);
            }
            Some("run") => {
                let name = positionals.get(1).map(|w| w.text.as_str()).unwrap_or("");
                return script(name).scale(Scale::Many);
            }
            Some("publish") => return Classification::new(C::ExecPkgPublish),
            // `lerna version` commits, tags and pushes by default.
            Some("version") => return Classification::new(C::ExecVcsPublish),
            _ => {}
        }
    }
    let mut j = Classification::new(C::ExecBuild);
    if let Some(out) = inv.any_value(flags![
        "-o",
        "--out",
        "--outfile",
        "--out-dir",
        "--outdir",
        "--output",
    ]) {
        j.targets.push((out, Access::Write));
    }
    if matches!(inv.program, "zig") && inv.sub(flags![]) == "run" {
        return Classification::opaque(C::ExecInterpreter, "runs a Zig program");
    }
    j
}
