//! `speed --svg DIR`: one SVG chart per algorithm family, drawn with
//! `plotters` (SVG backend, no system libraries) from the rows of the run.
//!
//! Each chart is a grid of panels, one per headline mode of the family;
//! each panel plots MB/s against message size (both axes logarithmic)
//! for our fastest backend on this CPU, our portable `soft` backend, and
//! every peer measured in the same run.

use std::path::Path;

use plotters::prelude::*;

use crate::Row;

/// One panel: the rows of `alg` whose mode is `mode`, and the peers of
/// `alg` whose mode is `mode` up to its `:` (a whole-buffer type's row,
/// `ctr:Sm4Ctr`, against the peer's composition, `ctr`).
struct Panel {
    alg: &'static str,
    mode: &'static str,
    title: &'static str,
}

/// One chart (one SVG file): a family's panels.
struct Family {
    file: &'static str,
    title: &'static str,
    panels: &'static [Panel],
}

const fn panel(alg: &'static str, mode: &'static str, title: &'static str) -> Panel {
    Panel { alg, mode, title }
}

const FAMILIES: [Family; 4] = [
    Family {
        file: "speed-sm4.svg",
        title: "SM4 modes",
        panels: &[
            panel("sm4", "ecb-enc", "SM4-ECB (Sm4)"),
            panel("sm4", "ctr:Sm4Ctr", "SM4-CTR (Sm4Ctr)"),
            panel("sm4", "cbc-dec:Sm4CbcDec", "SM4-CBC decrypt (Sm4CbcDec)"),
            panel("sm4", "cbc-enc:Sm4CbcEnc", "SM4-CBC encrypt (Sm4CbcEnc)"),
            panel("sm4", "xts-enc:Sm4Xts", "SM4-XTS (Sm4Xts)"),
            panel("sm4", "gcm-enc:Sm4Gcm", "SM4-GCM (Sm4Gcm)"),
            panel("sm4", "ccm-enc:Sm4Ccm", "SM4-CCM (Sm4Ccm)"),
            panel("cmac", "sm4", "CMAC-SM4 (Sm4Cmac)"),
        ],
    },
    Family {
        file: "speed-sm3.svg",
        title: "SM3",
        panels: &[
            panel("sm3", "digest", "SM3, one message"),
            panel("sm3", "digest_many", "SM3, 16 messages at once"),
        ],
    },
    Family {
        file: "speed-chacha.svg",
        title: "ChaCha / XChaCha",
        panels: &[
            panel("chacha20", "stream", "ChaCha20"),
            panel("chacha12", "stream", "ChaCha12"),
            panel("chacha8", "stream", "ChaCha8"),
            panel("xchacha20", "stream", "XChaCha20"),
            panel("xchacha12", "stream", "XChaCha12"),
        ],
    },
    Family {
        file: "speed-adiantum.svg",
        title: "NH, NHPoly1305, Adiantum",
        panels: &[
            panel("nh", "hash", "NH"),
            panel("nhpoly1305", "hash", "NHPoly1305"),
            panel("poly1305", "hash", "Poly1305 (raw)"),
            panel("adiantum-xchacha12-aes", "enc", "Adiantum-XChaCha12-AES"),
            panel("adiantum-xchacha20-aes", "enc", "Adiantum-XChaCha20-AES"),
            panel("hpolyc-xchacha12-aes", "enc", "HPolyC-XChaCha12-AES"),
        ],
    },
];

/// A line of a panel: its legend label and its (bytes, MB/s) points.
struct Line {
    label: String,
    kind: Kind,
    points: Vec<(f64, f64)>,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Best,
    Soft,
    Peer,
}

/// A row's (message size, MB/s) points; a call that processes several
/// messages (`digest_many`) is plotted at its messages' size.
fn points(r: &Row) -> Vec<(f64, f64)> {
    (0..r.secs.len())
        .filter_map(|i| Some((r.sizes[i] as f64, r.bytes[i] as f64 / r.secs[i]? / 1e6)))
        .collect()
}

/// The lines of one panel: our fastest row (by MB/s at the largest size it
/// has), our `soft` row, and every peer.
fn lines(rows: &[Row], p: &Panel) -> Vec<Line> {
    let base = p.mode.split(':').next().unwrap_or(p.mode);
    let ours: Vec<&Row> = rows
        .iter()
        .filter(|r| !r.peer && r.alg == p.alg && r.mode == p.mode)
        .collect();
    let last = |r: &&Row| points(r).last().map_or(0.0, |&(_, v)| v);
    let mut out = Vec::new();
    if let Some(best) = ours
        .iter()
        .filter(|r| r.backend != "soft")
        .max_by(|a, b| last(a).total_cmp(&last(b)))
    {
        out.push(Line {
            label: format!("ours ({}{})", best.backend, crate::WIPE_LABEL),
            kind: Kind::Best,
            points: points(best),
        });
    }
    if let Some(soft) = ours.iter().find(|r| r.backend == "soft") {
        out.push(Line {
            label: format!("ours (soft{})", crate::WIPE_LABEL),
            kind: Kind::Soft,
            points: points(soft),
        });
    }
    for peer in rows
        .iter()
        .filter(|r| r.peer && r.alg == p.alg && r.mode == base)
    {
        out.push(Line {
            label: format!("peer: {}", peer.backend),
            kind: Kind::Peer,
            points: points(peer),
        });
    }
    out.retain(|l| !l.points.is_empty());
    out
}

/// The CPU's model name as `/proc/cpuinfo` gives it, with the family and
/// model numbers (VMs often name only the vendor's line: "AMD EPYC"), else
/// the architecture.
pub fn cpu_model() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        info.lines()
            .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
            .and_then(|l| l.split(':').nth(1))
            .map(|v| v.trim().to_string())
    };
    match (field("model name"), field("cpu family"), field("model")) {
        (Some(name), Some(family), Some(model)) => {
            format!("{name} (family {family}, model {model})")
        }
        (Some(name), _, _) => name,
        _ => std::env::consts::ARCH.to_string(),
    }
}

/// The commit the binary runs at (`git describe`-style short hash, with
/// `-dirty` for uncommitted changes), or `unknown` outside a checkout.
pub fn commit() -> String {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--short", "HEAD"]) {
        Some(hash) => match git(&["status", "--porcelain", "--untracked-files=no"]) {
            Some(s) if !s.is_empty() => format!("{hash}-dirty"),
            _ => hash,
        },
        None => "unknown".into(),
    }
}

/// Write one SVG per family that has rows into `dir`; returns the paths.
pub fn write_charts(rows: &[Row], dir: &Path) -> Result<Vec<String>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let subtitle = format!("{}, commit {}", cpu_model(), commit());
    let mut written = Vec::new();
    for family in &FAMILIES {
        let panels: Vec<(&Panel, Vec<Line>)> = family
            .panels
            .iter()
            .map(|p| (p, lines(rows, p)))
            .filter(|(_, l)| !l.is_empty())
            .collect();
        if panels.is_empty() {
            continue;
        }
        let path = dir.join(family.file);
        draw(&path, family.title, &subtitle, &panels)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        written.push(path.display().to_string());
    }
    Ok(written)
}

const PANEL_W: u32 = 420;
const PANEL_H: u32 = 300;
const HEADER_H: u32 = 56;

fn draw(
    path: &Path,
    title: &str,
    subtitle: &str,
    panels: &[(&Panel, Vec<Line>)],
) -> Result<(), Box<dyn std::error::Error>> {
    let cols = panels.len().min(if panels.len() == 4 { 2 } else { 3 });
    let grid_rows = panels.len().div_ceil(cols);
    let size = (PANEL_W * cols as u32, HEADER_H + PANEL_H * grid_rows as u32);
    let root = SVGBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE)?;
    let (header, body) = root.split_vertically(HEADER_H);
    header.draw(&Text::new(
        format!("{title}: MB/s by message size (higher is better)"),
        (12, 8),
        ("sans-serif", 20).into_font().style(FontStyle::Bold),
    ))?;
    header.draw(&Text::new(
        subtitle.to_string(),
        (12, 32),
        ("sans-serif", 14).into_font().color(&RGBColor(80, 80, 80)),
    ))?;
    let areas = body.split_evenly((grid_rows, cols));
    for ((panel, lines), area) in panels.iter().zip(areas) {
        draw_panel(&area, panel.title, lines)?;
    }
    root.present()?;
    Ok(())
}

fn draw_panel(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    title: &str,
    lines: &[Line],
) -> Result<(), Box<dyn std::error::Error>> {
    let all = lines.iter().flat_map(|l| l.points.iter());
    let (mut x_lo, mut x_hi, mut y_lo, mut y_hi) = (f64::MAX, 0f64, f64::MAX, 0f64);
    for &(x, y) in all {
        x_lo = x_lo.min(x);
        x_hi = x_hi.max(x);
        y_lo = y_lo.min(y);
        y_hi = y_hi.max(y);
    }
    // Room above the highest line and below the lowest on the log axis.
    let (y_lo, y_hi) = (y_lo / 1.6, y_hi * 1.6);
    // The x axis is log2 of the size, so that its ticks fall on the
    // table's powers of two (16, 32, ..., 8K).
    let (x_lo, x_hi) = (x_lo.log2() - 0.3, x_hi.log2() + 0.3);
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 15))
        .margin(8)
        .x_label_area_size(32)
        .y_label_area_size(52)
        .build_cartesian_2d(x_lo..x_hi, (y_lo..y_hi).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("message bytes")
        .y_desc("MB/s")
        .x_labels(12)
        .x_label_formatter(&|x| size_label(x.exp2()))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style(("sans-serif", 11))
        .axis_desc_style(("sans-serif", 12))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()?;
    let mut peers = 0;
    for line in lines {
        let color = match line.kind {
            Kind::Best => RGBColor(0, 90, 181),
            Kind::Soft => RGBColor(120, 160, 210),
            // Peers in warm colours, each its own.
            Kind::Peer => {
                peers += 1;
                [
                    RGBColor(220, 50, 32),
                    RGBColor(230, 140, 20),
                    RGBColor(150, 60, 150),
                ][(peers - 1) % 3]
            }
        };
        let style = ShapeStyle::from(&color).stroke_width(2);
        chart
            .draw_series(LineSeries::new(line.points.iter().map(log2_x), style))?
            .label(line.label.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], style));
        chart.draw_series(
            line.points
                .iter()
                .map(|p| Circle::new(log2_x(p), 2, ShapeStyle::from(&color).filled())),
        )?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(200, 200, 200))
        .label_font(("sans-serif", 11))
        .draw()?;
    Ok(())
}

fn log2_x(&(x, y): &(f64, f64)) -> (f64, f64) {
    (x.log2(), y)
}

fn size_label(x: f64) -> String {
    if x >= 1024.0 {
        format!("{}K", (x / 1024.0).round())
    } else {
        format!("{x:.0}")
    }
}
