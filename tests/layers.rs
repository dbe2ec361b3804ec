//! The layers of `src/`: every top-level module imports only the modules
//! below it in one order (`ORDER`), or, beside the order, only those it
//! is allowed (`SIDE`), so no import runs back up and no two modules
//! import each other, directly or around a circle. The order is the one
//! `docs/ARCHITECTURE.md` states ("The layers").
//!
//! The test reads the sources (no device, no build of their contents) and
//! counts strictly: every `crate::` path outside `#[cfg(test)]` modules,
//! with `src/tests/` aside, in code, comments and doc comments alike
//! (intra-doc links included), each path of a `crate::{a, b::{c}}` group
//! on its own, `super::` and `self::` paths that climb into another
//! module, and every path through a re-export (`pub use`, lib.rs's
//! included) counted against the module that defines the item:
//! `crate::Animator` is `gpu`. `cargo test --test layers -- --nocapture`
//! prints the graph with each edge's count.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first: a module may import only those before it.
const ORDER: &[&str] = &[
    "kinds", "error", "compress", "model", "layout", "tables", "plan", "cpu", "gpu", "playback",
];

/// The modules beside the order, each with the only modules it may import.
const SIDE: &[(&str, &[&str])] = &[
    ("gltf", &["kinds", "error", "model"]),
    (
        "compressor",
        &[
            "kinds", "error", "compress", "model", "layout", "tables", "cpu",
        ],
    ),
];

/// The modules `module` may import.
fn allowed(module: &str) -> Option<Vec<&'static str>> {
    if let Some(at) = ORDER.iter().position(|m| *m == module) {
        return Some(ORDER[..at].to_vec());
    }
    SIDE.iter()
        .find(|(m, _)| *m == module)
        .map(|(_, below)| below.to_vec())
}

// ---------------------------------------------------------------------------
// Reading the sources

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// `text` with comments, string literals and character literals blanked
/// (newlines kept), so that braces, `use` and `mod` are found in code only.
fn code_only(text: &[u8]) -> Vec<u8> {
    let mut out = text.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for b in &mut out[from..to.min(text.len())] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    };
    let mut i = 0;
    while i < text.len() {
        let prev_ident = i > 0 && is_ident(text[i - 1]);
        if text[i..].starts_with(b"//") {
            let end = text[i..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(text.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if text[i..].starts_with(b"/*") {
            let (mut depth, mut j) = (1, i + 2);
            while j < text.len() && depth > 0 {
                if text[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if text[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if !prev_ident && (text[i] == b'r' || text[i..].starts_with(b"br")) && {
            let s = if text[i] == b'b' { i + 2 } else { i + 1 };
            let hashes = text[s..].iter().take_while(|&&b| b == b'#').count();
            text.get(s + hashes) == Some(&b'"')
        } {
            let s = if text[i] == b'b' { i + 2 } else { i + 1 };
            let hashes = text[s..].iter().take_while(|&&b| b == b'#').count();
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let body = s + hashes + 1;
            let end = text[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(text.len(), |p| body + p + close.len());
            blank(&mut out, i, end);
            i = end;
        } else if text[i] == b'"' {
            let mut j = i + 1;
            while j < text.len() && text[j] != b'"' {
                j += if text[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i, j + 1);
            i = j + 1;
        } else if text[i] == b'\'' && !prev_ident {
            // A character literal ('x', '\n', '\u{..}', or one multi-byte
            // character); otherwise a lifetime.
            let end = if text.get(i + 1) == Some(&b'\\') {
                text[i + 2..]
                    .iter()
                    .position(|&b| b == b'\'')
                    .map(|p| i + 2 + p + 1)
            } else {
                let width = match text.get(i + 1) {
                    Some(&b) if b >= 0xF0 => 4,
                    Some(&b) if b >= 0xE0 => 3,
                    Some(&b) if b >= 0xC0 => 2,
                    _ => 1,
                };
                (text.get(i + 1 + width) == Some(&b'\'')).then_some(i + 2 + width)
            };
            match end {
                Some(end) => {
                    blank(&mut out, i, end);
                    i = end;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The index of the `}` that closes the `{` at `open` in `code`.
fn matching_brace(code: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (j, &b) in code.iter().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return j;
                }
            }
            _ => {}
        }
    }
    code.len()
}

fn skip_space(code: &[u8], mut i: usize) -> usize {
    while i < code.len() && code[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

fn ident_at(code: &[u8], i: usize) -> Option<(String, usize)> {
    let end = i + code[i..].iter().take_while(|&&b| is_ident(b)).count();
    (end > i).then(|| (String::from_utf8_lossy(&code[i..end]).into_owned(), end))
}

/// If an item starts at `i` (after attributes and visibility) and is
/// `mod NAME {` or `mod NAME;`, its name, whether it has a body, and the
/// index of its `{` or `;`.
fn module_item(code: &[u8], mut i: usize) -> Option<(String, usize)> {
    loop {
        i = skip_space(code, i);
        if code[i..].starts_with(b"#[") {
            let mut depth = 0;
            while i < code.len() {
                match code[i] {
                    b'[' => depth += 1,
                    b']' => {
                        depth -= 1;
                        if depth == 0 {
                            i += 1;
                            break;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        } else {
            break;
        }
    }
    if code[i..].starts_with(b"pub") && !code.get(i + 3).is_some_and(|&b| is_ident(b)) {
        i = skip_space(code, i + 3);
        if code.get(i) == Some(&b'(') {
            i += code[i..].iter().position(|&b| b == b')')? + 1;
        }
        i = skip_space(code, i);
    }
    if !(code[i..].starts_with(b"mod") && code.get(i + 3).is_some_and(|b| b.is_ascii_whitespace()))
    {
        return None;
    }
    let (name, end) = ident_at(code, skip_space(code, i + 3))?;
    let at = skip_space(code, end);
    matches!(code.get(at), Some(b'{') | Some(b';')).then_some((name, at))
}

/// One source file, its module path (`["gpu", "skin"]` for
/// `src/gpu/skin/mod.rs`), its text with `#[cfg(test)]` modules blanked,
/// and the same text with comments and literals blanked too.
struct Source {
    file: PathBuf,
    module: Vec<String>,
    text: Vec<u8>,
    code: Vec<u8>,
}

/// Blanks every `#[cfg(test)] mod` (inline or in a file of its own) of
/// `text`; returns the names of those declared as files.
fn blank_test_modules(text: &mut [u8]) -> Vec<String> {
    let code = code_only(text);
    let mut files = Vec::new();
    let mut from = 0;
    while let Some(p) = find(&code[from..], b"#[cfg(test)]") {
        let at = from + p;
        from = at + 1;
        if let Some((name, end)) = module_item(&code, at) {
            let end = if code[end] == b'{' {
                matching_brace(&code, end)
            } else {
                files.push(name);
                end
            };
            for b in &mut text[at..=end.min(code.len() - 1)] {
                if *b != b'\n' {
                    *b = b' ';
                }
            }
        }
    }
    files
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Every `.rs` file under `src/` outside `src/tests/` and the test
/// modules declared as files.
fn sources(root: &Path) -> Vec<Source> {
    let mut out = Vec::new();
    let mut stack = vec![(root.join("src"), Vec::<String>::new())];
    let mut test_files = BTreeSet::new();
    while let Some((dir, module)) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if module.is_empty() && name == "tests" {
                    continue;
                }
                let mut sub = module.clone();
                sub.push(name);
                stack.push((path, sub));
            } else if let Some(stem) = name.strip_suffix(".rs") {
                let mut m = module.clone();
                if stem != "mod" && !(module.is_empty() && stem == "lib") {
                    m.push(stem.to_string());
                }
                let mut text = std::fs::read(&path).unwrap();
                for test_mod in blank_test_modules(&mut text) {
                    let mut t = m.clone();
                    t.push(test_mod);
                    test_files.insert(t);
                }
                let code = code_only(&text);
                out.push(Source {
                    file: path,
                    module: m,
                    text,
                    code,
                });
            }
        }
    }
    out.retain(|s| {
        !test_files
            .iter()
            .any(|t| s.module.len() >= t.len() && s.module[..t.len()] == t[..])
    });
    out
}

// ---------------------------------------------------------------------------
// Paths

/// A path a use tree names, with the name it is imported under where it is
/// renamed (`as`), or `*` for a glob.
type Named = (Vec<String>, Option<String>);

/// Parses a use tree (or a plain path) at `i`, after its first segment
/// (`prefix`), into every full path it names: `a::{b, c::{d, e}}` gives
/// `a::b`, `a::c::d`, `a::c::e`. Returns where it ends.
fn paths_at(text: &[u8], i: usize, prefix: Vec<String>, out: &mut Vec<Named>) -> usize {
    let mut path = prefix;
    let mut i = i;
    loop {
        let j = skip_space(text, i);
        if !text[j..].starts_with(b"::") {
            let alias = alias_at(text, i);
            out.push((path, alias.as_ref().map(|(a, _)| a.clone())));
            return alias.map_or(i, |(_, end)| end);
        }
        let k = skip_space(text, j + 2);
        match text.get(k) {
            Some(b'{') => return group_at(text, k + 1, &path, out),
            Some(b'*') => {
                out.push((path, Some("*".to_string())));
                return k + 1;
            }
            Some(&b) if is_ident(b) => {
                let (seg, end) = ident_at(text, k).unwrap();
                path.push(seg);
                i = end;
            }
            _ => {
                out.push((path, None));
                return i;
            }
        }
    }
}

/// The trees of a `{ .. }` group whose body starts at `at`.
fn group_at(text: &[u8], mut at: usize, path: &[String], out: &mut Vec<Named>) -> usize {
    loop {
        at = skip_group_space(text, at);
        match text.get(at) {
            Some(b'}') => return at + 1,
            Some(b',') => at += 1,
            Some(b'*') => {
                out.push((path.to_vec(), Some("*".to_string())));
                at += 1;
            }
            Some(&b) if is_ident(b) => {
                let (seg, end) = ident_at(text, at).unwrap();
                let mut sub = path.to_vec();
                if seg != "self" {
                    sub.push(seg);
                }
                at = paths_at(text, end, sub, out);
            }
            _ => return at,
        }
    }
}

/// `as NAME` at `i` (after spaces): the name and where it ends.
fn alias_at(text: &[u8], i: usize) -> Option<(String, usize)> {
    let j = skip_space(text, i);
    if text[j..].starts_with(b"as") && text.get(j + 2).is_some_and(|b| b.is_ascii_whitespace()) {
        ident_at(text, skip_space(text, j + 2))
    } else {
        None
    }
}

/// Skips spaces, newlines and `//` comments (doc comment markers too)
/// inside a use group.
fn skip_group_space(text: &[u8], mut i: usize) -> usize {
    loop {
        i = skip_space(text, i);
        if text[i..].starts_with(b"//") {
            i = text[i..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(text.len(), |p| i + p);
        } else {
            return i;
        }
    }
}

/// Every path of `text` that starts with `crate::`, `super::` or `self::`
/// (not inside a longer name or path), as (byte offset, segments).
fn crate_paths(text: &[u8]) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    for start in ["crate", "super", "self"] {
        let mut from = 0;
        while let Some(p) = find(&text[from..], start.as_bytes()) {
            let at = from + p;
            from = at + start.len();
            let before = at.checked_sub(1).map(|b| text[b]);
            if before.is_some_and(|b| is_ident(b) || b == b':')
                || !text[at + start.len()..].starts_with(b"::")
            {
                continue;
            }
            let mut found = Vec::new();
            paths_at(text, at + start.len(), vec![start.to_string()], &mut found);
            out.extend(found.into_iter().map(|(path, _)| (at, path)));
        }
    }
    out
}

/// The crate's modules and the names each imports (`use`, any
/// visibility) at its own level, which paths through it resolve by.
#[derive(Default)]
struct Crate {
    modules: BTreeSet<Vec<String>>,
    /// (module, name) -> the absolute path it stands for.
    uses: BTreeMap<(Vec<String>, String), Vec<String>>,
    /// module -> the modules it imports every name of (`use m::*`).
    globs: BTreeMap<Vec<String>, Vec<Vec<String>>>,
}

impl Crate {
    fn new(sources: &[Source]) -> Crate {
        let mut krate = Crate::default();
        for s in sources {
            for i in 0..=s.module.len() {
                krate.modules.insert(s.module[..i].to_vec());
            }
            for at in 0..s.code.len() {
                if s.code[at] == b'm' && (at == 0 || !is_ident(s.code[at - 1])) {
                    if let Some((name, end)) = module_item(&s.code, at) {
                        if s.code[end] == b'{' {
                            let mut m = module_at(s, at).0;
                            m.push(name);
                            krate.modules.insert(m);
                        }
                    }
                }
            }
        }
        for s in sources {
            krate.read_uses(s);
        }
        krate
    }

    /// Records every module-level `use` of `s`.
    fn read_uses(&mut self, s: &Source) {
        let mut from = 0;
        while let Some(p) = find(&s.code[from..], b"use") {
            let at = from + p;
            from = at + 3;
            if (at > 0 && is_ident(s.code[at - 1]))
                || !s.code.get(at + 3).is_some_and(|b| b.is_ascii_whitespace())
            {
                continue;
            }
            let (module, depth) = module_at(s, at);
            if depth != 0 {
                continue; // a use inside a function
            }
            let i = skip_space(&s.code, at + 3);
            let Some((first, end)) = ident_at(&s.code, i) else {
                continue;
            };
            let mut paths = Vec::new();
            paths_at(&s.code, end, vec![first], &mut paths);
            for (path, alias) in paths {
                let Some(abs) = self.absolute(&module, &path) else {
                    continue;
                };
                match alias.as_deref() {
                    Some("*") => self.globs.entry(module.clone()).or_default().push(abs),
                    Some(alias) => {
                        self.uses.insert((module.clone(), alias.to_string()), abs);
                    }
                    None => {
                        let name = abs.last().cloned().unwrap_or_default();
                        self.uses.insert((module.clone(), name), abs);
                    }
                }
            }
        }
    }

    /// `path` as an absolute path from the crate root, seen from `module`;
    /// `None` for another crate's.
    fn absolute(&self, module: &[String], path: &[String]) -> Option<Vec<String>> {
        let mut base = module.to_vec();
        let mut rest = path;
        match path.first().map(String::as_str) {
            Some("crate") => {
                base.clear();
                rest = &path[1..];
            }
            Some("self") => rest = &path[1..],
            Some("super") => {
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
            }
            Some(first) => {
                let mut sub = module.to_vec();
                sub.push(first.to_string());
                if !self.modules.contains(&sub) {
                    return None;
                }
            }
            None => return None,
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    /// The module that defines what the absolute `path` names, following
    /// re-exports. A name found neither as a module nor as an import is
    /// defined where the path stands (or in one of its globs, which
    /// `globs_stay_home` keeps inside the top-level module).
    fn defining_module(&self, path: &[String], hops: usize) -> Vec<String> {
        let mut module: Vec<String> = Vec::new();
        for (n, seg) in path.iter().enumerate() {
            let mut sub = module.clone();
            sub.push(seg.clone());
            if self.modules.contains(&sub) {
                module = sub;
                continue;
            }
            if let Some(target) = self.uses.get(&(module.clone(), seg.clone())) {
                assert!(hops < 32, "re-exports loop at {}", path.join("::"));
                let mut next = target.clone();
                next.extend(path[n + 1..].iter().cloned());
                return self.defining_module(&next, hops + 1);
            }
            return module;
        }
        module
    }

    /// Globs that import from another top-level module, which would hide
    /// where a name comes from.
    fn globs_leaving_home(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (module, globs) in &self.globs {
            for glob in globs {
                if module.first() != glob.first() {
                    out.push(format!(
                        "{} imports {}::*",
                        module.join("::"),
                        glob.join("::")
                    ));
                }
            }
        }
        out
    }
}

/// The module that the code at `at` of `s` is in (an inline module's
/// body, or the file's), and how many braces deep inside it `at` is.
fn module_at(s: &Source, at: usize) -> (Vec<String>, usize) {
    let mut module = s.module.clone();
    let mut inline: Vec<(usize, usize)> = Vec::new(); // (its closing brace, the outer body depth)
    let (mut depth, mut body) = (0usize, 0usize);
    let mut i = 0;
    while i < at {
        match s.code[i] {
            b'{' => depth += 1,
            b'}' => {
                if inline.last().is_some_and(|(close, _)| *close == i) {
                    body = inline.pop().unwrap().1;
                    module.pop();
                }
                depth -= 1;
            }
            b'm' if i == 0 || !is_ident(s.code[i - 1]) => {
                if let Some((name, end)) = module_item(&s.code, i) {
                    if s.code[end] == b'{' && end < at {
                        inline.push((matching_brace(&s.code, end), body));
                        module.push(name);
                        depth += 1;
                        body = depth;
                        i = end + 1;
                        continue;
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    (module, depth - body)
}

/// One import of another top-level module: where, and what path.
struct Edge {
    from: String,
    to: String,
    file: PathBuf,
    line: usize,
    path: String,
}

/// Every import of a top-level module by another, with where it is.
/// Also returns the top-level modules (those with a file) and the globs
/// that leave their module.
fn edges(root: &Path) -> (Vec<Edge>, BTreeSet<String>, Vec<String>) {
    let sources = sources(root);
    let krate = Crate::new(&sources);
    let tops: BTreeSet<String> = sources
        .iter()
        .filter_map(|s| s.module.first().cloned())
        .collect();
    let mut out = Vec::new();
    for s in &sources {
        let Some(from) = s.module.first() else {
            continue; // lib.rs: the root may name every module
        };
        for (at, path) in crate_paths(&s.text) {
            let (module, _) = module_at(s, at);
            let Some(abs) = krate.absolute(&module, &path) else {
                continue;
            };
            if abs.first().is_some_and(|m| m == "tests") {
                continue; // the crate's own tests, aside
            }
            // The module that defines the item, and the top-level module
            // the path names on its way there (`crate::plan::X` names
            // `plan` even where `plan` re-exports `X` from below): both
            // are imports.
            let defined = match krate.defining_module(&abs, 0).first() {
                Some(to) => to.clone(),
                None => format!("<crate root: {}>", abs.join("::")),
            };
            let named = abs
                .first()
                .filter(|m| krate.modules.contains(&vec![(*m).clone()]));
            let mut targets = vec![defined];
            if let Some(named) = named {
                if !targets.contains(named) {
                    targets.push(named.clone());
                }
            }
            for to in targets {
                if to != *from && to != "tests" {
                    out.push(Edge {
                        from: from.clone(),
                        to,
                        file: s.file.strip_prefix(root).unwrap().to_path_buf(),
                        line: s.text[..at].iter().filter(|&&b| b == b'\n').count() + 1,
                        path: path.join("::"),
                    });
                }
            }
        }
    }
    (out, tops, krate.globs_leaving_home())
}

/// The strongly connected components of more than one module.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    // Two modules are in one circle when each reaches the other.
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(m) = stack.pop() {
            for next in graph.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<_, _> = graph.keys().map(|m| (m.clone(), reach(m))).collect();
    let mut out: Vec<BTreeSet<String>> = Vec::new();
    for (m, r) in &reaches {
        let circle: BTreeSet<String> = r
            .iter()
            .filter(|n| reaches.get(*n).is_some_and(|back| back.contains(m)))
            .cloned()
            .collect();
        if circle.len() > 1 && !out.contains(&circle) {
            out.push(circle);
        }
    }
    out
}

#[test]
fn every_import_follows_the_order_of_the_layers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (edges, tops, krate_globs) = edges(root);
    let mut counts: BTreeMap<(String, String), usize> = BTreeMap::new();
    for e in &edges {
        *counts.entry((e.from.clone(), e.to.clone())).or_default() += 1;
    }
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, to) in counts.keys() {
        graph.entry(from.clone()).or_default().insert(to.clone());
    }
    println!("top-level modules: {}", tops.len());
    for from in &tops {
        let row: Vec<String> = counts
            .iter()
            .filter(|((f, _), _)| f == from)
            .map(|((_, t), n)| format!("{t} {n}"))
            .collect();
        println!("{from} -> {}", row.join(", "));
    }
    let found = circles(&graph);
    println!("circles: {}", found.len());
    let mut problems = Vec::new();
    for m in &tops {
        if allowed(m).is_none() {
            problems.push(format!("src/{m} has no place in ORDER or SIDE"));
        }
    }
    for e in &edges {
        if !allowed(&e.from).is_some_and(|ok| ok.contains(&e.to.as_str())) {
            problems.push(format!(
                "{}:{}: {} imports {} ({})",
                e.file.display(),
                e.line,
                e.from,
                e.to,
                e.path
            ));
        }
    }
    problems.extend(krate_globs);
    for circle in &found {
        problems.push(format!("circle: {circle:?}"));
    }
    assert!(
        edges.len() > 100 && tops.len() >= 10,
        "the scan found {} imports among {} modules: it no longer reads the sources",
        edges.len(),
        tops.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The scan itself, on a crate written here: each way of naming another
/// module counts (a doc link through lib.rs's re-export, a nested group,
/// a `super::super` path, a path through another module's re-export,
/// under both modules), and what the order leaves aside does not (a
/// `#[cfg(test)]` module, a string of another crate).
#[test]
fn the_scan_counts_every_way_of_naming_a_module() {
    let root = std::env::temp_dir().join(format!("keyframe-gpu-layers-{}", std::process::id()));
    let files = [
        ("src/lib.rs", "pub mod high;\npub mod low;\nmod mid;\npub use high::Thing;\n"),
        (
            "src/low.rs",
            "//! Names [`Thing`](crate::Thing) in a doc link.\n\
             use crate::{high::{Other, deep::Deeper}};\n\
             pub struct Base;\n\
             #[cfg(test)]\nmod tests {\n    use crate::mid::Tested;\n    fn f() { let _ = '{'; }\n}\n\
             fn g() -> &'static str { \"other_crate::x\" }\n",
        ),
        (
            "src/high/mod.rs",
            "pub mod deep;\npub struct Thing;\npub struct Other;\npub use crate::low::Base;\n",
        ),
        (
            "src/high/deep.rs",
            "pub struct Deeper;\nfn f() { let _ = super::super::low::Base; }\n",
        ),
        ("src/mid.rs", "use crate::high::Base;\npub struct Tested;\n"),
    ];
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let (found, tops, _) = edges(&root);
    std::fs::remove_dir_all(&root).unwrap();
    let mut got: Vec<(String, String, String)> = found
        .iter()
        .map(|e| (e.from.clone(), e.to.clone(), e.path.clone()))
        .collect();
    got.sort();
    let want = [
        ("high", "low", "crate::low::Base"),
        ("high", "low", "super::super::low::Base"),
        ("low", "high", "crate::Thing"),
        ("low", "high", "crate::high::Other"),
        ("low", "high", "crate::high::deep::Deeper"),
        ("mid", "high", "crate::high::Base"),
        ("mid", "low", "crate::high::Base"),
    ];
    let want: Vec<(String, String, String)> = want
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    assert_eq!(got, want);
    assert_eq!(tops.len(), 3);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in &found {
        graph
            .entry(e.from.clone())
            .or_default()
            .insert(e.to.clone());
    }
    assert_eq!(circles(&graph).len(), 1, "high and low import each other");
}
