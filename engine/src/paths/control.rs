//! Control files as a data table: what, written, steers an agent, CI, version control or a
//! command a person approved once and learning then allows. One row per file or directory, with
//! the reason writing it is a floor; `engine/tests/data/places/control.toml` holds a case per row.
//!
//! A row is lower-case whole path segments, matched anywhere in a path (`.roo/mcp.json` is
//! `<anything>/.roo/mcp.json`; a directory row covers everything below it). [`CONTROL_NAME_PREFIXES`]
//! are file names matched by their beginning (`jest.config.` is `jest.config.js`, `.ts`, …).
//! Reading a control file is not a floor (unless it is also a credential); writing one is.
//!
//! Files routine work edits all the time are rows only when they make a runner execute code it
//! would not otherwise run: `package.json` (scripts), `pyproject.toml` and `Cargo.toml` (build
//! backends, build scripts of new dependencies), a `Makefile`. Plain source (`src/*.rs`), docs and
//! `go.mod` (Go runs no dependency code at build time) are not rows.
//!
//! Must not: hold placement logic (that is `paths.rs`).

/// One row: the path segments and why writing there is a floor.
pub(crate) struct Row {
    pub path: &'static str,
    pub why: &'static str,
}

const fn row(path: &'static str, why: &'static str) -> Row {
    Row { path, why }
}

const AGENT_CONFIG: &str = "an agent's configuration: what it may run without asking, its hooks";
const AGENT_MCP: &str = "an agent's MCP server list: a server listed there is started and run";
const AGENT_MEMORY: &str =
    "an agent's instructions or memory: an agent follows what it says in every session";
const AGENT_DIR: &str =
    "an agent's project directory: its rules, modes, MCP servers, hooks and settings";
const CI: &str = "CI configuration: runs with the repository's secrets on the next push";
const GIT_RUNS: &str = "version control reads it on a routine `git status` or `git diff` and runs \
                        what it names (hooks, filters, fsmonitor, another repository's config)";
const RUNNER: &str = "a routine runner reads it and obeys: options, plugins and commands a learned \
                      test or build command then runs";
const TOOLCHAIN: &str =
    "picks the interpreter or toolchain a learned command runs (a path there runs in its place)";
const SCRIPTS: &str = "defines the commands a learned `npm test`, `make`, `just` or `nox` runs";
const DEPENDENCIES: &str =
    "names dependencies and build steps: a new one's build script runs on the next learned build";
const SHADOW: &str = "a module the runner imports from the working directory before its own";
const INSTALLED: &str =
    "installed programs the project's runners execute (`uv run pytest`, `npx jest`)";
const EDITOR: &str = "an editor or debugger runs it when it opens the project";
const WORKSPACE: &str = "editor tasks, launch and settings an agent's editor runs";

/// Control files and directories, matched as whole segments anywhere in a path.
pub(crate) const CONTROL: &[Row] = &[
    // CI and forges.
    row(".github/workflows", CI),
    row(".github/actions", CI),
    row(".gitlab-ci.yml", CI),
    row(".circleci", CI),
    row("azure-pipelines.yml", CI),
    row("bitbucket-pipelines.yml", CI),
    row(".buildkite", CI),
    row("jenkinsfile", CI),
    row(".drone.yml", CI),
    row(".travis.yml", CI),
    // Claude Code.
    row(".claude", AGENT_DIR),
    row("claude.md", AGENT_MEMORY),
    row("claude.local.md", AGENT_MEMORY),
    row(".mcp.json", AGENT_MCP),
    row("managed-settings.json", AGENT_CONFIG),
    // Shared instruction files (AGENTS.md: Codex, Cursor, Copilot, Amp, Jules, …).
    row("agents.md", AGENT_MEMORY),
    row("agents.override.md", AGENT_MEMORY),
    row("agent.md", AGENT_MEMORY),
    row(".agents", AGENT_DIR),
    // Codex.
    row(".codex", AGENT_DIR),
    // GitHub Copilot.
    row(".github/copilot-instructions.md", AGENT_MEMORY),
    row(".github/instructions", AGENT_MEMORY),
    row(".github/prompts", AGENT_MEMORY),
    row(".github/chatmodes", AGENT_MEMORY),
    row(".github/agents", AGENT_MEMORY),
    row(".github/hooks", AGENT_CONFIG),
    row(".copilot", AGENT_DIR),
    row("mcp-config.json", AGENT_MCP),
    // Gemini CLI and Qwen Code.
    row("gemini.md", AGENT_MEMORY),
    row(".gemini", AGENT_DIR),
    row("qwen.md", AGENT_MEMORY),
    row(".qwen", AGENT_DIR),
    // Cursor.
    row(".cursor", AGENT_DIR),
    row(".cursorrules", AGENT_MEMORY),
    row(".cursorignore", AGENT_CONFIG),
    // Windsurf / Codeium.
    row(".windsurf", AGENT_DIR),
    row(".windsurfrules", AGENT_MEMORY),
    row(".codeium", AGENT_DIR),
    row("mcp_config.json", AGENT_MCP),
    // Cline, Roo Code, Kilo Code.
    row(".clinerules", AGENT_MEMORY),
    row("cline_mcp_settings.json", AGENT_MCP),
    row("saoudrizwan.claude-dev", AGENT_DIR),
    row("documents/cline", AGENT_DIR),
    row(".roo", AGENT_DIR),
    row(".roomodes", AGENT_CONFIG),
    row(".kilocode", AGENT_DIR),
    row(".kilocodemodes", AGENT_CONFIG),
    // Continue.
    row(".continue", AGENT_DIR),
    row(".continuerc.json", AGENT_CONFIG),
    // Zed.
    row(".zed", AGENT_DIR),
    row(".config/zed", AGENT_DIR),
    row(".rules", AGENT_MEMORY),
    // Amazon Q and Kiro.
    row(".amazonq", AGENT_DIR),
    row(".aws/amazonq", AGENT_DIR),
    row(".kiro", AGENT_DIR),
    // OpenCode, Crush, Amp, Goose.
    row("opencode.json", AGENT_CONFIG),
    row("opencode.jsonc", AGENT_CONFIG),
    row(".opencode", AGENT_DIR),
    row(".config/opencode", AGENT_DIR),
    row("crush.json", AGENT_CONFIG),
    row(".crush.json", AGENT_CONFIG),
    row("crush.md", AGENT_MEMORY),
    row(".crush", AGENT_DIR),
    row(".config/crush", AGENT_DIR),
    row(".config/amp", AGENT_DIR),
    row(".goosehints", AGENT_MEMORY),
    row(".config/goose", AGENT_DIR),
    // Warp, Junie, OpenHands, Augment, Tabnine, Trae, JetBrains AI, Firebase Studio.
    row("warp.md", AGENT_MEMORY),
    row(".junie", AGENT_DIR),
    row(".openhands", AGENT_DIR),
    row(".augment-guidelines", AGENT_MEMORY),
    row(".augment", AGENT_DIR),
    row(".tabnine", AGENT_DIR),
    row(".trae", AGENT_DIR),
    row(".aiassistant", AGENT_DIR),
    row(".idx", AGENT_DIR),
    // Aider (the `.aider.` prefix rows are below).
    row(".aider.conf.yml", AGENT_CONFIG),
    // Editors an agent runs in.
    row(".vscode/tasks.json", WORKSPACE),
    row(".vscode/launch.json", WORKSPACE),
    row(".vscode/settings.json", WORKSPACE),
    row(".vscode/mcp.json", AGENT_MCP),
    row(".devcontainer/devcontainer.json", WORKSPACE),
    row(".devcontainer/features", WORKSPACE),
    // Version control.
    // A `.git` file (`gitdir: …`) or anything in the directory: `config`, `commondir`,
    // `modules/*/config` and `hooks`, `info/attributes`, `worktrees/*`.
    row(".git", GIT_RUNS),
    row(".gitattributes", GIT_RUNS),
    row(".githooks", GIT_RUNS),
    row(".hg/hgrc", GIT_RUNS),
    row(".hgrc", GIT_RUNS),
    // Runner configuration.
    row("pytest.ini", RUNNER),
    row("tox.ini", RUNNER),
    row("setup.cfg", RUNNER),
    row("conftest.py", RUNNER),
    row("noxfile.py", SCRIPTS),
    row(".cargo/config.toml", RUNNER),
    row(".cargo/config", RUNNER),
    row("build.rs", DEPENDENCIES),
    row(".npmrc", RUNNER),
    row(".yarnrc.yml", RUNNER),
    row(".pnpmfile.cjs", RUNNER),
    row("go.work", DEPENDENCIES),
    row("uv.toml", DEPENDENCIES),
    // Files routine work edits that make a runner execute what it would not otherwise.
    row("package.json", SCRIPTS),
    row("composer.json", SCRIPTS),
    row("pyproject.toml", DEPENDENCIES),
    row("cargo.toml", DEPENDENCIES),
    row("makefile", SCRIPTS),
    row("gnumakefile", SCRIPTS),
    row("justfile", SCRIPTS),
    row(".justfile", SCRIPTS),
    row("taskfile.yml", SCRIPTS),
    // Toolchain and interpreter selection.
    row("rust-toolchain", TOOLCHAIN),
    row("rust-toolchain.toml", TOOLCHAIN),
    row(".python-version", TOOLCHAIN),
    row(".tool-versions", TOOLCHAIN),
    row("mise.toml", TOOLCHAIN),
    row(".mise.toml", TOOLCHAIN),
    row(".nvmrc", TOOLCHAIN),
    row(".node-version", TOOLCHAIN),
    // What the runners import or execute from the project.
    row("pytest.py", SHADOW),
    row("_pytest", SHADOW),
    row(".venv/bin", INSTALLED),
    row("venv/bin", INSTALLED),
    row("site-packages", INSTALLED),
    row("node_modules", INSTALLED),
    // Editors and debuggers.
    row(".nvim.lua", EDITOR),
    row(".exrc", EDITOR),
    row(".dir-locals.el", EDITOR),
    row(".emacs.d", EDITOR),
    row(".gdbinit", EDITOR),
    row(".lldbinit", EDITOR),
    row(".pdbrc", EDITOR),
    row(".psqlrc", EDITOR),
    row(".config/lesskey", EDITOR),
    row(".manpath", EDITOR),
    // leastgrant's own rules.
    row(".leastgrant", "leastgrant's own rules for this project"),
];

/// Control files recognised by the beginning of their name.
pub(crate) const CONTROL_NAME_PREFIXES: &[Row] = &[
    row(".aider.", AGENT_CONFIG),
    row("jest.config.", RUNNER),
    row("vitest.config.", RUNNER),
    row("vitest.workspace.", RUNNER),
    row("babel.config.", RUNNER),
    row(".babelrc", RUNNER),
    row("vite.config.", RUNNER),
    row("playwright.config.", RUNNER),
    row("karma.conf.", RUNNER),
    row(".mocharc.", RUNNER),
    row("webpack.config.", RUNNER),
    row("rollup.config.", RUNNER),
    row("eslint.config.", RUNNER),
    row(".eslintrc.", RUNNER),
];

/// The paths of [`CONTROL`], as the segment index reads them.
pub(crate) const CONTROL_PATHS: [&str; CONTROL.len()] = paths_of(CONTROL);

#[allow(clippy::indexing_slicing)] // compile time only
pub(crate) const fn paths_of<const N: usize>(rows: &[Row]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = rows[i].path;
        i += 1;
    }
    out
}

/// The row a lower-cased path matches, for the words of a floor: the last (innermost) segment
/// run that matches, else a name prefix.
pub(crate) fn reason(lower: &str) -> Option<&'static str> {
    let segments: Vec<&str> = lower.split('/').filter(|s| !s.is_empty()).collect();
    let name = segments.last().copied().unwrap_or("");
    let mut found = None;
    for (start, _) in segments.iter().enumerate() {
        for row in CONTROL {
            let mut rest = segments.get(start..).unwrap_or(&[]).iter();
            if row.path.split('/').all(|part| rest.next() == Some(&part)) {
                found = Some(row.why);
            }
        }
    }
    found.or_else(|| {
        CONTROL_NAME_PREFIXES
            .iter()
            .find(|row| name.starts_with(row.path))
            .map(|row| row.why)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row has a case in `engine/tests/data/places/control.toml`, and every case names a
    /// row: the table and its cases do not drift apart.
    #[test]
    fn every_row_has_a_case_and_every_case_a_row() {
        let cases = include_str!("../../tests/data/places/control.toml");
        let rows: Vec<String> = cases
            .lines()
            .filter_map(|l| l.strip_prefix("row = "))
            .map(|v| v.trim_matches(['"', '\'']).to_string())
            .collect();
        let mut missing = Vec::new();
        for row in CONTROL.iter().chain(CONTROL_NAME_PREFIXES) {
            if !rows.iter().any(|r| r == row.path) {
                missing.push(row.path);
            }
            assert!(!row.why.is_empty());
        }
        assert!(missing.is_empty(), "rows without a case: {missing:?}");
        for r in &rows {
            assert!(
                CONTROL
                    .iter()
                    .chain(CONTROL_NAME_PREFIXES)
                    .any(|row| row.path == r),
                "a case names `{r}`, which is no row"
            );
        }
    }
}
