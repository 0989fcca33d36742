//! Module layers inside each crate, read from the source the way `architecture.rs` reads crate
//! edges from `cargo metadata`: every file's references to the other modules of its crate
//! (`use crate::…`, `crate::x::…` paths, `super::…` resolved to the parent, `self::…`, and a child
//! module's name), followed through the `use` re-exports that lead to where a name is defined.
//! Two checks on the file-level graph: no import cycles, and, where a crate declares its layer
//! order, no module importing from a layer above its own. Items under `#[cfg(test)]` are left
//! out: a test may reach anywhere.
//!
//! Also here: every repository path that `docs/*.md` and `README.md` name in backticks exists.
//!
//! The checker is tested on small inline crates first, so that a check passing means something.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------------
// Reading source: comments and literals out, tokens in.

/// Source text with comments, string, byte-string, raw-string and char literals blanked (a
/// literal becomes `""`), so that neither a doc comment nor a string holding Rust code is read
/// as a path. Lifetimes stay as they are.
fn strip(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if (c == 'r' || (c == 'b' && next == Some('r')))
            && !chars
                .get(i.wrapping_sub(1))
                .is_some_and(|p| p.is_alphanumeric() || *p == '_')
            && {
                let mut j = i + if c == 'b' { 2 } else { 1 };
                while chars.get(j) == Some(&'#') {
                    j += 1;
                }
                chars.get(j) == Some(&'"')
            }
        {
            // A raw string: r"…", r#"…"#, br"…".
            i += if c == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while chars.get(i) == Some(&'#') {
                hashes += 1;
                i += 1;
            }
            i += 1;
            while i < chars.len() {
                if chars[i] == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#')) {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
            out.push_str("\"\"");
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // A char literal ('a', '\n', '"', '→') or a lifetime ('a, 'static).
            if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
                out.push_str("' '");
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
                out.push_str("' '");
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    PathSep,
    Open(char),
    Close(char),
    Punct(char),
}

fn tokenize(code: &str) -> Vec<Token> {
    let chars: Vec<char> = code.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            tokens.push(Token::Ident(word.trim_start_matches("r#").to_string()));
            continue;
        }
        if c == ':' && chars.get(i + 1) == Some(&':') {
            tokens.push(Token::PathSep);
            i += 2;
            continue;
        }
        match c {
            '{' | '(' | '[' => tokens.push(Token::Open(c)),
            '}' | ')' | ']' => tokens.push(Token::Close(c)),
            c if c.is_whitespace() || c.is_ascii_digit() => {}
            c => tokens.push(Token::Punct(c)),
        }
        i += 1;
    }
    tokens
}

fn is_ident(token: Option<&Token>, word: &str) -> bool {
    matches!(token, Some(Token::Ident(w)) if w == word)
}

/// The index just past the bracketed group that opens at `i`.
fn skip_group(tokens: &[Token], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < tokens.len() {
        match tokens[i] {
            Token::Open(_) => depth += 1,
            Token::Close(_) => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
}

/// Is the attribute starting at `i` (`#[…]`) exactly `#[cfg(test)]`?
fn is_cfg_test(tokens: &[Token], i: usize) -> bool {
    tokens.get(i) == Some(&Token::Punct('#'))
        && tokens.get(i + 1) == Some(&Token::Open('['))
        && is_ident(tokens.get(i + 2), "cfg")
        && tokens.get(i + 3) == Some(&Token::Open('('))
        && is_ident(tokens.get(i + 4), "test")
        && tokens.get(i + 5) == Some(&Token::Close(')'))
        && tokens.get(i + 6) == Some(&Token::Close(']'))
}

/// The tokens without the items under `#[cfg(test)]`, and the names of the file modules declared
/// under it (`#[cfg(test)] mod tests;`). `None` when the whole file is test-only.
fn without_tests(tokens: &[Token]) -> Option<(Vec<Token>, Vec<String>)> {
    if tokens.get(..3) == Some(&[Token::Punct('#'), Token::Punct('!'), Token::Open('[')])
        && is_ident(tokens.get(3), "cfg")
        && is_ident(tokens.get(5), "test")
        && tokens.get(6) == Some(&Token::Close(')'))
    {
        return None;
    }
    let mut kept = Vec::with_capacity(tokens.len());
    let mut test_modules = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if !is_cfg_test(tokens, i) {
            kept.push(tokens[i].clone());
            i += 1;
            continue;
        }
        i += 7;
        // Further attributes, then the item: to its `;` or through its first `{…}`.
        while tokens.get(i) == Some(&Token::Punct('#')) {
            i = skip_group(tokens, i + 1);
        }
        let start = i;
        while i < tokens.len() {
            match tokens[i] {
                Token::Punct(';') => {
                    i += 1;
                    break;
                }
                Token::Open('{') => {
                    i = skip_group(tokens, i);
                    break;
                }
                Token::Open(_) => i = skip_group(tokens, i),
                _ => i += 1,
            }
        }
        let item = &tokens[start..i];
        if let Some(at) = item.iter().position(|t| is_ident(Some(t), "mod"))
            && let Some(Token::Ident(name)) = item.get(at + 1)
            && item.get(at + 2) == Some(&Token::Punct(';'))
        {
            test_modules.push(name.clone());
        }
    }
    Some((kept, test_modules))
}

// ---------------------------------------------------------------------------------------------
// One crate's modules and what each refers to.

/// A path as written: its segments, whether it ends in a glob (`::*`) or names a macro (`!`).
#[derive(Debug, Clone)]
struct Written {
    segments: Vec<String>,
    glob: bool,
    /// Inline `mod … { }` blocks around it (`super` and `self` start inside them).
    inline_depth: usize,
    /// A `use` item's alias or last segment: the name it brings into scope.
    binds: Option<String>,
}

impl Written {
    fn text(&self) -> String {
        let mut text = self.segments.join("::");
        if self.glob {
            text.push_str("::*");
        }
        text
    }
}

/// One module (one file): what it defines, what it imports, the paths it writes.
#[derive(Debug, Default)]
struct Module {
    defines: BTreeSet<String>,
    /// `use` items and the paths in code, in order.
    paths: Vec<Written>,
    /// Is `name` declared by this module as a test-only file module?
    test_children: Vec<String>,
}

/// Parses one `use` tree starting at `i` under `prefix`; returns the index after it.
fn use_tree(
    tokens: &[Token],
    mut i: usize,
    prefix: Vec<String>,
    depth: usize,
    out: &mut Vec<Written>,
) -> usize {
    let mut segments = prefix;
    if tokens.get(i) == Some(&Token::PathSep) {
        i += 1;
    }
    loop {
        match tokens.get(i) {
            Some(Token::Ident(word)) => {
                segments.push(word.clone());
                i += 1;
                if tokens.get(i) == Some(&Token::PathSep) {
                    i += 1;
                    continue;
                }
                let mut binds = segments.last().cloned();
                if is_ident(tokens.get(i), "as")
                    && let Some(Token::Ident(alias)) = tokens.get(i + 1)
                {
                    binds = Some(alias.clone());
                    i += 2;
                }
                if segments.last().is_some_and(|s| s == "self") && segments.len() > 1 {
                    segments.pop();
                    if binds.as_deref() == Some("self") {
                        binds = segments.last().cloned();
                    }
                }
                out.push(Written {
                    segments,
                    glob: false,
                    inline_depth: depth,
                    binds,
                });
                return i;
            }
            Some(Token::Punct('*')) => {
                out.push(Written {
                    segments,
                    glob: true,
                    inline_depth: depth,
                    binds: None,
                });
                return i + 1;
            }
            Some(Token::Open('{')) => {
                i += 1;
                loop {
                    match tokens.get(i) {
                        Some(Token::Close('}')) => return i + 1,
                        Some(Token::Punct(',')) => i += 1,
                        None => return i,
                        Some(_) => {
                            let before = i;
                            i = use_tree(tokens, i, segments.clone(), depth, out);
                            if i == before {
                                i += 1;
                            }
                        }
                    }
                }
            }
            _ => return i,
        }
    }
}

const DEFINING: &[&str] = &[
    "fn", "struct", "enum", "const", "static", "type", "trait", "union", "mod",
];

/// Reads one file's (stripped) text.
fn module_of(code: &str) -> Option<Module> {
    let (tokens, test_children) = without_tests(&tokenize(code))?;
    let mut module = Module {
        test_children,
        ..Module::default()
    };
    // Brace depth at which each enclosing inline `mod … {` opened.
    let mut inline: Vec<usize> = Vec::new();
    let mut braces = 0usize;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            Token::Open('{') => braces += 1,
            Token::Close('}') => {
                braces = braces.saturating_sub(1);
                if inline.last() == Some(&braces) {
                    inline.pop();
                }
            }
            Token::Ident(word) if word == "mod" => {
                if let Some(Token::Ident(name)) = tokens.get(i + 1) {
                    if inline.is_empty() {
                        module.defines.insert(name.clone());
                    }
                    if tokens.get(i + 2) == Some(&Token::Open('{')) {
                        inline.push(braces);
                    }
                }
            }
            Token::Ident(word) if DEFINING.contains(&word.as_str()) => {
                if let Some(Token::Ident(name)) = tokens.get(i + 1)
                    && inline.is_empty()
                {
                    module.defines.insert(name.clone());
                }
            }
            Token::Ident(word) if word == "macro_rules" => {
                if let Some(Token::Ident(name)) = tokens.get(i + 2) {
                    module.defines.insert(format!("{name}!"));
                }
            }
            Token::Ident(word) if word == "use" => {
                i = use_tree(&tokens, i + 1, Vec::new(), inline.len(), &mut module.paths);
                continue;
            }
            Token::Ident(word)
                if tokens.get(i + 1) == Some(&Token::PathSep)
                    && (i == 0 || tokens[i - 1] != Token::PathSep)
                    && !(i >= 1 && is_ident(tokens.get(i - 1), "in")) =>
            {
                let mut segments = vec![word.clone()];
                let mut j = i + 1;
                while tokens.get(j) == Some(&Token::PathSep)
                    && let Some(Token::Ident(next)) = tokens.get(j + 1)
                {
                    segments.push(next.clone());
                    j += 2;
                }
                if tokens.get(j) == Some(&Token::Punct('!'))
                    && let Some(last) = segments.last_mut()
                {
                    last.push('!');
                }
                module.paths.push(Written {
                    segments,
                    glob: false,
                    inline_depth: inline.len(),
                    binds: None,
                });
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    Some(module)
}

/// A crate's modules by path (`""` is the crate root; `"shell::lex"`), each file read.
struct Crate {
    modules: BTreeMap<String, Module>,
}

/// The module path of a file under `src/` (`lib.rs` → `""`, `shell/mod.rs` → `"shell"`).
fn module_path(relative: &str) -> String {
    let stem = relative.trim_end_matches(".rs");
    let stem = stem.strip_suffix("/mod").unwrap_or(stem);
    if stem == "lib" || stem == "main" {
        return String::new();
    }
    stem.replace('/', "::")
}

fn display(module: &str) -> &str {
    if module.is_empty() { "crate" } else { module }
}

fn join(base: &str, name: &str) -> String {
    if base.is_empty() {
        name.to_string()
    } else {
        format!("{base}::{name}")
    }
}

impl Crate {
    /// Reads `(path relative to src, text)` pairs. With both `lib.rs` and `main.rs`, the binary
    /// is a crate of its own that reaches the library by name: only the library is read.
    fn from_files(files: &[(String, String)]) -> Crate {
        let has_lib = files.iter().any(|(p, _)| p == "lib.rs");
        let mut modules = BTreeMap::new();
        for (path, text) in files {
            if (has_lib && path == "main.rs") || path.starts_with("bin/") {
                continue;
            }
            if let Some(module) = module_of(&strip(text)) {
                modules.insert(module_path(path), module);
            }
        }
        let test_only: Vec<String> = modules
            .iter()
            .flat_map(|(name, m)| m.test_children.iter().map(|c| join(name, c)))
            .collect();
        for name in test_only {
            let prefix = format!("{name}::");
            modules.retain(|m, _| *m != name && !m.starts_with(&prefix));
        }
        Crate { modules }
    }

    fn read(src: &Path) -> Crate {
        let mut files = Vec::new();
        let mut stack = vec![src.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().filter_map(Result::ok) {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let relative = path.strip_prefix(src).unwrap();
                    let relative = relative.to_string_lossy().replace('\\', "/");
                    files.push((relative, std::fs::read_to_string(&path).unwrap()));
                }
            }
        }
        Crate::from_files(&files)
    }

    /// The crate-absolute segments a path written in `module` stands for, or `None` when it
    /// leaves the crate (std, other crates) or stays inside an inline module.
    fn absolute(&self, module: &str, written: &Written) -> Option<Vec<String>> {
        let segments = &written.segments;
        let first = segments.first()?;
        let base: Vec<String> = if module.is_empty() {
            Vec::new()
        } else {
            module.split("::").map(str::to_string).collect()
        };
        match first.as_str() {
            "crate" => Some(segments[1..].to_vec()),
            "super" => {
                let supers = segments.iter().take_while(|s| *s == "super").count();
                if supers <= written.inline_depth {
                    return None;
                }
                let up = supers - written.inline_depth;
                if up > base.len() {
                    return None;
                }
                let mut out = base[..base.len() - up].to_vec();
                out.extend_from_slice(&segments[supers..]);
                Some(out)
            }
            "self" if written.inline_depth == 0 => {
                let mut out = base;
                out.extend_from_slice(&segments[1..]);
                Some(out)
            }
            name if written.inline_depth == 0 && self.modules.contains_key(&join(module, name)) => {
                let mut out = base;
                out.extend_from_slice(segments);
                Some(out)
            }
            _ => None,
        }
    }

    /// The module that defines what crate-absolute `segments` name, through `use` re-exports.
    fn target(&self, segments: &[String], hops: usize) -> Option<String> {
        let mut known = 0;
        for n in 0..=segments.len() {
            if self.modules.contains_key(&segments[..n].join("::")) {
                known = n;
            }
        }
        let module = segments[..known].join("::");
        match segments.get(known) {
            None => Some(module),
            Some(name) => Some(
                self.defining(&module, name, hops)
                    .or_else(|| self.macro_home(name))
                    .unwrap_or(module),
            ),
        }
    }

    /// Where `name`, as seen in `module`, is defined: here, or where a `use` here brings it from.
    fn defining(&self, module: &str, name: &str, hops: usize) -> Option<String> {
        let m = self.modules.get(module)?;
        if m.defines.contains(name) {
            return Some(module.to_string());
        }
        if hops > 8 {
            return None;
        }
        let plain = name.trim_end_matches('!');
        for written in &m.paths {
            if written.inline_depth != 0 || written.binds.as_deref() != Some(plain) {
                continue;
            }
            if let Some(abs) = self.absolute(module, written) {
                let mut abs = abs;
                if name.ends_with('!')
                    && let Some(last) = abs.last_mut()
                {
                    last.push('!');
                }
                return self.target(&abs, hops + 1);
            }
        }
        for written in m.paths.iter().filter(|w| w.glob && w.inline_depth == 0) {
            if let Some(abs) = self.absolute(module, written)
                && let Some(source) = self.target(&abs, hops + 1)
                && source != module
                && let Some(found) = self.defining(&source, name, hops + 1)
            {
                return Some(found);
            }
        }
        None
    }

    /// The one module that defines macro `name!` (an exported macro is reached at the root).
    fn macro_home(&self, name: &str) -> Option<String> {
        if !name.ends_with('!') {
            return None;
        }
        let mut homes = self
            .modules
            .iter()
            .filter(|(_, m)| m.defines.contains(name))
            .map(|(n, _)| n.clone());
        let home = homes.next()?;
        homes.next().is_none().then_some(home)
    }

    /// Module → module it refers to → the first path that does.
    fn graph(&self) -> BTreeMap<String, BTreeMap<String, String>> {
        let mut graph: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for (name, module) in &self.modules {
            let edges = graph.entry(name.clone()).or_default();
            for written in &module.paths {
                let Some(abs) = self.absolute(name, written) else {
                    continue;
                };
                let Some(target) = self.target(&abs, 0) else {
                    continue;
                };
                if target != *name {
                    edges.entry(target).or_insert_with(|| written.text());
                }
            }
        }
        graph
    }
}

// ---------------------------------------------------------------------------------------------
// The checks.

type Graph = BTreeMap<String, BTreeMap<String, String>>;

/// The strongly connected components with more than one module (each sorted), sorted.
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    let nodes: Vec<&String> = graph.keys().collect();
    let reach = |from: &String| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(next) = stack.pop() {
            for to in graph.get(&next).into_iter().flat_map(|e| e.keys()) {
                if seen.insert(to.clone()) {
                    stack.push(to.clone());
                }
            }
        }
        seen
    };
    let reachable: BTreeMap<&String, BTreeSet<String>> =
        nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for node in &nodes {
        if done.contains(*node) || !reachable[node].contains(*node) {
            continue;
        }
        let component: Vec<String> = nodes
            .iter()
            .filter(|m| reachable[node].contains(**m) && reachable[*m].contains(*node))
            .map(|m| (*m).clone())
            .collect();
        done.extend(component.iter().cloned());
        if component.len() > 1 {
            out.push(component);
        }
    }
    out
}

/// A shortest cycle through the first module of `component`, as a readable chain with the path
/// that makes each step: `a → b (crate::b::X) → a (super::Y)`.
fn chain(graph: &Graph, component: &[String]) -> String {
    let start = &component[0];
    let inside: BTreeSet<&String> = component.iter().collect();
    let mut previous: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = VecDeque::from([start.clone()]);
    let mut closing = None;
    'search: while let Some(at) = queue.pop_front() {
        for to in graph[&at].keys().filter(|t| inside.contains(t)) {
            if to == start {
                closing = Some(at.clone());
                break 'search;
            }
            if !previous.contains_key(to) {
                previous.insert(to.clone(), at.clone());
                queue.push_back(to.clone());
            }
        }
    }
    let mut back = Vec::new();
    let mut at = closing.unwrap_or_else(|| start.clone());
    while at != *start {
        back.push(at.clone());
        at = previous[&at].clone();
    }
    let mut steps = vec![start.clone()];
    steps.extend(back.into_iter().rev());
    steps.push(start.clone());
    let mut text = display(&steps[0]).to_string();
    for pair in steps.windows(2) {
        text.push_str(&format!(
            " → {} (`{}`)",
            display(&pair[1]),
            graph[&pair[0]][&pair[1]]
        ));
    }
    text
}

/// Each cycle as `{members}: chain`.
fn describe(graph: &Graph, found: &[Vec<String>]) -> Vec<String> {
    found
        .iter()
        .map(|c| {
            let members: Vec<&str> = c.iter().map(|m| display(m)).collect();
            format!("{{{}}}: {}", members.join(", "), chain(graph, c))
        })
        .collect()
}

/// Every import from a layer above the importer's own (layers bottom first; an entry names a
/// module and its descendants, the longest entry deciding), and every module no layer places.
fn layer_violations(graph: &Graph, layers: &[&[&str]]) -> Vec<String> {
    let layer_of = |module: &str| -> Option<usize> {
        let mut best: Option<(usize, usize)> = None;
        for (index, group) in layers.iter().enumerate() {
            for entry in *group {
                let entry = if *entry == "crate" { "" } else { *entry };
                let covers = entry == module
                    || (!entry.is_empty() && module.starts_with(&format!("{entry}::")));
                if covers && best.is_none_or(|(len, _)| entry.len() > len) {
                    best = Some((entry.len(), index));
                }
            }
        }
        best.map(|(_, index)| index)
    };
    let mut out = Vec::new();
    for (from, edges) in graph {
        let Some(own) = layer_of(from) else {
            out.push(format!("`{}` is in no layer", display(from)));
            continue;
        };
        for (to, path) in edges {
            if let Some(theirs) = layer_of(to)
                && theirs > own
            {
                out.push(format!(
                    "`{}` (layer {own}) imports from `{}` (layer {theirs}): `{path}`",
                    display(from),
                    display(to)
                ));
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The checker on small crates written here.

fn small(files: &[(&str, &str)]) -> Graph {
    let files: Vec<(String, String)> = files
        .iter()
        .map(|(p, t)| ((*p).to_string(), (*t).to_string()))
        .collect();
    Crate::from_files(&files).graph()
}

fn edges(graph: &Graph) -> Vec<String> {
    graph
        .iter()
        .flat_map(|(from, to)| {
            to.keys()
                .map(move |t| format!("{} → {}", display(from), display(t)))
        })
        .collect()
}

#[test]
fn the_checker_finds_a_cycle_and_prints_it_as_a_chain() {
    let graph = small(&[
        ("lib.rs", "mod a;\nmod b;\nmod c;\n"),
        ("a.rs", "//! a\nuse crate::b::B;\npub struct A;\n"),
        ("b.rs", "use crate::{c::C, other};\npub struct B;\n"),
        ("c.rs", "pub struct C(crate::a::A);\n"),
    ]);
    let found = cycles(&graph);
    assert_eq!(found, vec![vec!["a", "b", "c"]]);
    assert_eq!(
        describe(&graph, &found),
        vec![
            "{a, b, c}: a → b (`crate::b::B`) → c (`crate::c::C`) → a (`crate::a::A`)".to_string()
        ]
    );
}

#[test]
fn the_checker_reads_super_self_children_and_re_exports() {
    let graph = small(&[
        (
            "lib.rs",
            "mod model;\nmod shell;\npub use model::Call;\nuse self::shell::parse;\n",
        ),
        ("model.rs", "pub struct Call;\n"),
        (
            "shell.rs",
            "mod lex;\nuse lex::Token;\npub fn parse() {}\nfn f(c: crate::Call) {}\n",
        ),
        (
            "shell/lex.rs",
            "use super::super::model::*;\npub struct Token;\n",
        ),
    ]);
    // `crate::Call` is the model's (re-exported at the root), not the root's.
    assert_eq!(
        edges(&graph),
        vec![
            "crate → model",
            "crate → shell",
            "shell → model",
            "shell → shell::lex",
            "shell::lex → model"
        ]
    );
    assert!(cycles(&graph).is_empty());
}

#[test]
fn the_checker_reads_past_comments_strings_and_tests() {
    let graph = small(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        (
            "a.rs",
            "//! uses crate::b::X in a comment\n\
             /* crate::b::Y */\n\
             const CODE: &str = \"use crate::b::Z;\";\n\
             const RAW: &str = r#\"crate::b::W\"#;\n\
             const Q: char = '\"';\n\
             fn f<'a>(x: &'a str) -> &'a str { x }\n\
             #[cfg(test)]\nmod tests {\n    use crate::b::B;\n    use super::*;\n}\n\
             #[cfg(test)]\nmod more;\n",
        ),
        ("a/more.rs", "use crate::b::B;\n"),
        ("b.rs", "pub struct B;\nmod inner {\n    use super::B;\n}\n"),
    ]);
    assert_eq!(edges(&graph), Vec::<String>::new());
}

#[test]
fn the_checker_finds_a_layer_violation_and_a_module_without_a_layer() {
    let graph = small(&[
        ("lib.rs", "mod low;\nmod high;\nmod lost;\n"),
        ("low.rs", "use crate::high::H;\n"),
        ("high.rs", "pub struct H;\n"),
        ("lost.rs", "use crate::low;\n"),
    ]);
    assert!(cycles(&graph).is_empty());
    assert_eq!(
        layer_violations(&graph, &[&["low"], &["high"], &["crate"]]),
        vec![
            "`lost` is in no layer",
            "`low` (layer 0) imports from `high` (layer 1): `crate::high::H`",
        ]
    );
}

#[test]
fn the_checker_passes_a_clean_layered_crate() {
    let graph = small(&[
        (
            "lib.rs",
            "mod text;\nmod rules;\npub use rules::Rule;\nfn go() { rules::check(); }\n",
        ),
        ("text.rs", "pub fn quote() {}\n"),
        (
            "rules.rs",
            "mod pattern;\npub struct Rule;\npub fn check() { pattern::m(); }\n",
        ),
        (
            "rules/pattern.rs",
            "use crate::text::quote;\npub fn m() { quote(); }\n",
        ),
    ]);
    assert!(cycles(&graph).is_empty());
    assert_eq!(
        layer_violations(
            &graph,
            &[&["text"], &["rules::pattern"], &["rules"], &["crate"]]
        ),
        Vec::<String>::new()
    );
    // The same crate declared upside down fails (the root over the rules, the pattern over the
    // text; a module and its parent's entry share a layer).
    assert_eq!(
        layer_violations(&graph, &[&["crate"], &["rules"], &["text"]]).len(),
        2
    );
}

#[test]
fn a_macro_exported_at_the_root_belongs_to_its_module() {
    let graph = small(&[
        ("lib.rs", "mod index;\nmod knowledge;\n"),
        (
            "index.rs",
            "#[macro_export]\nmacro_rules! names { () => {}; }\n",
        ),
        ("knowledge.rs", "const N: () = crate::names!();\n"),
    ]);
    assert_eq!(edges(&graph), vec!["knowledge → index"]);
}

// ---------------------------------------------------------------------------------------------
// The workspace's crates.

/// One crate's module rules: the cycles it is known to have today (each a set of modules; a
/// cycle found must lie inside one of them), and its layer order, bottom first, when declared.
struct Rules {
    src: &'static str,
    known_cycles: &'static [&'static [&'static str]],
    layers: Option<&'static [&'static [&'static str]]>,
}

const CRATES: &[Rules] = &[
    Rules {
        src: "engine/src",
        known_cycles: &[],
        layers: Some(&[
            &["model::action", "model::links"],
            &["model::call", "model::answer"],
            &["model"],
            &["static_index", "hex", "tokens"],
            &["sha256"],
            // `shell.rs` holds what every shell module shares (`UNRESOLVED`, `MAX_DEPTH`).
            &["shell"],
            &["shell::lex"],
            &["shell::parse", "shell::quote"],
            &["shell::script"],
            &["shell::unwrap"],
            &["glob"],
            &[
                "paths::control",
                "paths::resolution",
                "paths::secrets",
                "paths::sockets",
            ],
            &["paths"],
            &["net"],
            &["signature::precision"],
            &["signature"],
            &["knowledge::classification"],
            &[
                "knowledge::files",
                "knowledge::vcs",
                "knowledge::packages",
                "knowledge::cloud",
                "knowledge::network",
            ],
            &["knowledge::runtime"],
            &["knowledge"],
            &["targets", "spelling"],
            &["tools"],
            &["analyze", "native"],
            &["decay"],
            &["envelope::stats"],
            &["envelope"],
            &["session"],
            &["rules::pattern"],
            &["rules"],
            &["rules::lint", "rules::compiled"],
            &["grants"],
            &["decide::floors"],
            &["answers", "decide"],
            &["frozen::layout", "frozen::record"],
            &["frozen::shared", "frozen::table"],
            &["frozen::writer"],
            &["frozen"],
            &["crate"],
        ]),
    },
    Rules {
        src: "ingest/src",
        known_cycles: &[],
        layers: Some(&[
            &["schema", "claude::record", "specstory::body"],
            &["common", "outcome"],
            &["project"],
            &["source", "standing"],
            &["specstory::input"],
            &[
                "claude",
                "codex",
                "copilot",
                "cursor",
                "gemini",
                "ledger",
                "otel",
                "specstory",
                "claude_settings",
                "codex_rules",
                "copilot_permissions",
            ],
            &["registry"],
            &["table"],
            &["decisions"],
            &["run"],
            &["crate"],
        ]),
    },
    Rules {
        src: "replay/src",
        known_cycles: &[],
        layers: Some(&[
            &["error"],
            &["settings"],
            &["events"],
            &["classify"],
            &["native", "shared"],
            &["replay"],
            &["summary", "synthetic"],
            &["shard"],
            &["output", "run"],
            &["merge", "export"],
            &["crate"],
        ]),
    },
    Rules {
        src: "report/src",
        known_cycles: &[],
        layers: None,
    },
    Rules {
        src: "hook/src",
        known_cycles: &[],
        layers: Some(&[
            &["sha_ni"],
            &["files"],
            &["layout", "links", "catalogue", "payload"],
            &["grants", "state", "rules_cache"],
            &["agent", "ledger", "policy"],
            &["session", "answers", "workspace"],
            &["check"],
            &["crate"],
            &["main"],
        ]),
    },
    Rules {
        src: "demo/src",
        known_cycles: &[],
        layers: Some(&[
            &["text"],
            &["vocabulary"],
            &["calibration"],
            &["project"],
            &["session"],
            &["crate"],
        ]),
    },
    Rules {
        src: "src",
        known_cycles: &[],
        layers: None,
    },
];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn no_crate_has_a_module_import_cycle_or_imports_from_a_layer_above() {
    let mut problems = Vec::new();
    for rules in CRATES {
        let graph = Crate::read(&repo().join(rules.src)).graph();
        assert!(
            graph.len() > 1,
            "{}: no modules read — has the crate moved?",
            rules.src
        );
        let found = cycles(&graph);
        let described = describe(&graph, &found);
        for (component, text) in found.iter().zip(&described) {
            let known = rules
                .known_cycles
                .iter()
                .any(|k| component.iter().all(|m| k.contains(&display(m))));
            if !known {
                problems.push(format!("{}: import cycle {text}", rules.src));
            }
        }
        for known in rules.known_cycles {
            if !found
                .iter()
                .any(|c| c.iter().all(|m| known.contains(&display(m))))
            {
                eprintln!(
                    "{}: the known cycle {known:?} is gone; remove it from the list",
                    rules.src
                );
            }
        }
        if let Some(layers) = rules.layers {
            problems.extend(
                layer_violations(&graph, layers)
                    .into_iter()
                    .map(|v| format!("{}: {v}", rules.src)),
            );
        }
    }
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// Every path the docs name exists.

/// The inline code spans of a Markdown text outside fenced blocks, each with the top-level
/// directory of the section it is in (a heading naming one, as the code map's `### \`engine/\``).
fn code_spans(markdown: &str, dirs: &BTreeSet<String>) -> Vec<(Option<String>, String)> {
    let mut sections: Vec<(Option<String>, String)> = vec![(None, String::new())];
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if line.starts_with('#') {
            let named = dirs
                .iter()
                .find(|c| line.contains(&format!("`{c}/`")))
                .cloned();
            sections.push((named, String::new()));
        }
        let text = &mut sections.last_mut().unwrap().1;
        text.push_str(line);
        text.push('\n');
    }
    let mut out = Vec::new();
    for (section, text) in sections {
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] != b'`' {
                i += 1;
                continue;
            }
            let run = bytes[i..].iter().take_while(|b| **b == b'`').count();
            let fence = "`".repeat(run);
            let start = i + run;
            match text[start..].find(&fence) {
                Some(len) => {
                    out.push((section.clone(), text[start..start + len].trim().to_string()));
                    i = start + len + run;
                }
                None => break,
            }
        }
    }
    out
}

/// Does `path` (segments may hold `*`; a trailing `/` asks for a directory) exist under `base`?
fn exists(base: &Path, path: &str) -> bool {
    let dir_wanted = path.ends_with('/');
    let mut places = vec![base.to_path_buf()];
    for segment in path.trim_end_matches('/').split('/') {
        let mut next = Vec::new();
        for place in &places {
            if segment.contains('*') {
                let (head, tail) = segment.split_once('*').unwrap();
                for entry in std::fs::read_dir(place).into_iter().flatten().flatten() {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    if name.starts_with(head) && name[head.len()..].ends_with(tail) {
                        next.push(entry.path());
                    }
                }
            } else {
                next.push(place.join(segment));
            }
        }
        places = next;
    }
    places
        .iter()
        .any(|p| if dir_wanted { p.is_dir() } else { p.exists() })
}

/// Every directory under `dir` (not `target`, not hidden), `dir` included.
fn directories(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    let mut i = 0;
    while i < out.len() {
        let here = out[i].clone();
        for entry in std::fs::read_dir(&here).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.path().is_dir() && !name.starts_with('.') && name != "target" {
                out.push(entry.path());
            }
        }
        i += 1;
    }
    out
}

const FILE_KINDS: &[&str] = &[
    ".rs", ".toml", ".md", ".json", ".jsonl", ".tsv", ".csv", ".py", ".ipynb", ".sh", ".txt",
];

/// The paths in `markdown` that name nothing in the repository at `root`, and how many paths it
/// names: spans that start with one of its top-level entries and hold a `/` (read from the root,
/// or from the directory whose section they are in), and, in the section of a top-level
/// directory (a crate, `src/`, `tests/`), spans naming a file or directory in it (`shell/lex.rs`,
/// `tests/data/`, `paths.rs`: found anywhere under it).
fn missing_paths(root: &Path, markdown: &str) -> (usize, Vec<String>) {
    let top: BTreeSet<String> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.') && n != "target")
        .collect();
    let dirs: BTreeSet<String> = top
        .iter()
        .filter(|n| root.join(n).is_dir())
        .cloned()
        .collect();
    let mut out = Vec::new();
    let mut checked = 0;
    for (section, span) in code_spans(markdown, &dirs) {
        let plain = !span.is_empty()
            && !span.chars().any(|c| {
                c.is_whitespace() || matches!(c, '~' | '<' | '>' | '$' | ':' | '=' | '|' | '@')
            })
            && !span.starts_with('/')
            && !span.starts_with('.')
            && !span.starts_with('-');
        if !plain {
            continue;
        }
        let first = span.split('/').next().unwrap_or_default();
        let from_root = span.contains('/') && top.contains(first);
        let in_crate = section.is_some()
            && (span.ends_with('/') || FILE_KINDS.iter().any(|k| span.ends_with(k)))
            && (span.contains('/') || span.ends_with(".rs"));
        if !from_root && !in_crate {
            continue;
        }
        checked += 1;
        let found = (from_root && exists(root, &span))
            || section.as_ref().is_some_and(|c| {
                directories(&root.join(c))
                    .iter()
                    .any(|dir| exists(dir, &span))
            });
        if !found {
            out.push(match section {
                Some(c) => format!("`{span}` (in the `{c}/` section)"),
                None => format!("`{span}`"),
            });
        }
    }
    (checked, out)
}

#[test]
fn the_path_check_finds_a_missing_path_and_passes_present_ones() {
    let root = std::env::temp_dir().join(format!("leastgrant-doc-paths-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("engine/src/shell")).unwrap();
    std::fs::create_dir_all(root.join("engine/tests/data/knowledge")).unwrap();
    std::fs::create_dir_all(root.join("docs")).unwrap();
    for file in [
        "engine/Cargo.toml",
        "engine/src/shell/lex.rs",
        "engine/src/paths.rs",
        "engine/tests/data/knowledge/files.toml",
        "docs/formats.md",
    ] {
        std::fs::write(root.join(file), "").unwrap();
    }
    let markdown = "See `docs/formats.md`, `docs/` and `engine/src/gone.rs`; not `~/.x/y`, \
                    `<dir>/projects`, `a b/c` or `https://x/y`.\n\
                    ```\nengine/src/fenced.rs\n```\n\
                    ### `engine/` (`leastgrant-engine`)\n\
                    - `shell/lex.rs`, `paths.rs`, `tests/data/`, `knowledge/*.toml`, `shell/gone.rs`, \
                    `allow/ask`, `docs/missing/`\n";
    let (checked, missing) = missing_paths(&root, markdown);
    let _ = std::fs::remove_dir_all(&root);
    assert_eq!(checked, 10);
    assert_eq!(
        missing,
        vec![
            "`engine/src/gone.rs`",
            "`shell/gone.rs` (in the `engine/` section)",
            "`docs/missing/` (in the `engine/` section)",
        ]
    );
}

/// Paths the docs name that are not in the repository on purpose (none today).
const KNOWN_MISSING: &[&str] = &[];

#[test]
fn every_path_the_docs_name_exists() {
    let root = repo();
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    pages.push(root.join("README.md"));
    let mut missing = Vec::new();
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        let name = page.strip_prefix(&root).unwrap().display().to_string();
        let (count, gone) = missing_paths(&root, &text);
        checked += count;
        missing.extend(gone.into_iter().map(|m| format!("{name}: {m}")));
    }
    // The code map alone names well over a hundred paths: reading none is a broken check.
    assert!(checked > 100, "only {checked} paths read from the docs");
    for known in KNOWN_MISSING {
        if !missing.iter().any(|m| m == known) {
            eprintln!("{known} exists now (or is no longer named); remove it from KNOWN_MISSING");
        }
    }
    missing.retain(|m| !KNOWN_MISSING.contains(&m.as_str()));
    assert!(
        missing.is_empty(),
        "paths the docs name that do not exist:\n{}\n",
        missing.join("\n")
    );
}
