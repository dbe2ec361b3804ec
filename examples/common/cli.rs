//! What the examples' `main`s share: one-line errors, a panic hook that
//! keeps to them, Mesa's `XDG_RUNTIME_DIR` warning silenced, and clap's
//! errors cut to one line. Included by path (`#[path]`): Cargo has no
//! library target for examples.
#![allow(dead_code, reason = "each example uses a subset")]

use std::process::ExitCode;

/// `s` on one line.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Mesa's Vulkan and EGL drivers look for a Wayland display and print
/// "XDG_RUNTIME_DIR is invalid or not set" on headless machines; point the
/// variable at the temp folder when it is unset. Call first thing in
/// `main`, while the process is still single-threaded.
pub fn quiet_mesa() {
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        std::env::set_var("XDG_RUNTIME_DIR", std::env::temp_dir());
    }
}

/// A panic becomes `error: internal error at FILE:LINE: MESSAGE` on one
/// line and exit code 2, like every other error of the examples.
pub fn one_line_panics() {
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("error: internal error{at}: {}", one_line(&msg));
        std::process::exit(2);
    }));
}

/// The command line, or the exit code to leave with: success after
/// `--help` or `--version` (printed), 2 after clap's first error line.
pub fn parse<C: clap::Parser>() -> Result<C, ExitCode> {
    match C::try_parse() {
        Ok(c) => Ok(c),
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                print!("{e}");
                return Err(ExitCode::SUCCESS);
            }
            let text = e.to_string();
            eprintln!(
                "{}",
                one_line(text.lines().next().unwrap_or("invalid arguments"))
            );
            Err(ExitCode::from(2))
        }
    }
}

/// What every example does first: Mesa's chatter off, panics as one
/// line, then the command line ([`parse`]: the exit code to leave with
/// after `--help`, `--version` or a bad argument).
pub fn start<C: clap::Parser>() -> Result<C, ExitCode> {
    quiet_mesa();
    one_line_panics();
    parse()
}

/// The whole `main` of an example that runs one job: [`start`], then
/// `run` on the command line; its error is one line on stderr (`error:
/// ...`) and exit code 2.
pub fn main_with<C: clap::Parser>(run: impl FnOnce(&C) -> Result<(), String>) -> ExitCode {
    let cli = match start::<C>() {
        Ok(c) => c,
        Err(code) => return code,
    };
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", one_line(&e));
            ExitCode::from(2)
        }
    }
}
