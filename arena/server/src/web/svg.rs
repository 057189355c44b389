//! SVG drawn on the server: dice, and the chart of ratings over time. Every text in it is
//! escaped here ([`escape`]); the templates insert the result as it is.

use std::fmt::Write as _;

use crate::league::standings::RatingSeries;
use crate::match_text::{DieView, Lie};

/// `text` escaped for XML and HTML text and attribute values.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Where the pips of faces 1..=6 sit on a die of 30 × 30.
fn pips(face: u8) -> &'static [(u8, u8)] {
    const L: u8 = 8;
    const M: u8 = 15;
    const H: u8 = 22;
    match face {
        1 => &[(M, M)],
        2 => &[(L, L), (H, H)],
        3 => &[(L, L), (M, M), (H, H)],
        4 => &[(L, L), (H, L), (L, H), (H, H)],
        5 => &[(L, L), (H, L), (M, M), (L, H), (H, H)],
        6 => &[(L, L), (H, L), (L, M), (H, M), (L, H), (H, H)],
        _ => &[],
    }
}

/// The pips of `face` (1..=6), or its number for the other faces (Zokken's Miwin dice
/// have faces up to 9), in `colour`.
fn face_marks(face: u8, colour: &str) -> String {
    let spots = pips(face);
    if spots.is_empty() {
        return format!(
            "<text x=\"15\" y=\"21\" text-anchor=\"middle\" font-size=\"17\" \
             font-family=\"sans-serif\" fill=\"{colour}\">{face}</text>"
        );
    }
    let mut marks = String::new();
    for (x, y) in spots {
        write!(
            marks,
            "<circle cx=\"{x}\" cy=\"{y}\" r=\"3\" fill=\"{colour}\"/>"
        )
        .expect("writing to a String");
    }
    marks
}

/// One die of the table as a view shows it: face up as thrown, set aside (a blue border),
/// turned from a six (yellow), under the cup (dark and covered, or, where the view may see
/// it, its face on grey with a dashed border), or not thrown yet (a dashed outline). Its
/// `data-face` is the face shown (none for a covered die), `data-lie` where it lies.
pub(super) fn table_die(die: DieView) -> String {
    let lie = die.lie.name();
    let (fill, stroke, dash, width, marks, what) = match die.lie {
        Lie::Empty => (
            "none",
            "#8a8a8a",
            " stroke-dasharray=\"3 3\"",
            1.5,
            "#222",
            "no die yet",
        ),
        Lie::Rolled => ("#fffdf7", "#333", "", 2.0, "#222", "thrown"),
        Lie::Held => ("#fffdf7", "#1f5fa8", "", 3.5, "#222", "set aside"),
        Lie::Turned => ("#fff3c4", "#8a6d00", "", 3.5, "#222", "turned from a six"),
        Lie::Cup if die.face.is_some() => (
            "#d5dde6",
            "#26323f",
            " stroke-dasharray=\"4 2\"",
            2.0,
            "#222",
            "under the cup",
        ),
        Lie::Cup => (
            "#26323f",
            "#26323f",
            "",
            2.0,
            "#fff",
            "under the cup, covered",
        ),
    };
    let label = match die.face {
        Some(face) => format!("{face}, {what}"),
        None => what.to_owned(),
    };
    let face_attr = die
        .face
        .map(|f| format!(" data-face=\"{f}\""))
        .unwrap_or_default();
    let mut svg = format!(
        "<svg class=\"die {lie}\" viewBox=\"0 0 30 30\" width=\"30\" height=\"30\" \
         role=\"img\" aria-label=\"{label}\" data-lie=\"{lie}\"{face_attr}><rect x=\"2\" \
         y=\"2\" width=\"26\" height=\"26\" rx=\"5\" fill=\"{fill}\" stroke=\"{stroke}\" \
         stroke-width=\"{width}\"{dash}/>"
    );
    match die.face {
        Some(face) => svg.push_str(&face_marks(face, marks)),
        None if die.lie == Lie::Cup => svg.push_str(
            "<text x=\"15\" y=\"21\" text-anchor=\"middle\" font-size=\"17\" \
             font-family=\"sans-serif\" fill=\"#fff\">?</text>",
        ),
        None => {}
    }
    svg.push_str("</svg>");
    svg
}

/// Line colours of the chart (distinguishable, dark enough on white).
const COLOURS: [&str; 8] = [
    "#1f5fa8", "#b3401b", "#2e7d32", "#7b3fa0", "#8a6d00", "#00727a", "#b0306a", "#555555",
];

/// The colour of the `i`-th series.
pub(super) fn colour(i: usize) -> &'static str {
    COLOURS[i % COLOURS.len()]
}

/// A rating chart's width and height, in its viewBox units.
const CHART_W: f64 = 720.0;
const CHART_H: f64 = 360.0;
/// A rating chart's margins around the plot (room for the ticks' labels).
const CHART_LEFT: f64 = 52.0;
const CHART_RIGHT: f64 = 16.0;
const CHART_TOP: f64 = 16.0;
const CHART_BOTTOM: f64 = 40.0;

/// The chart of `series` (rating μ against the number of the match), titled `title`; the
/// dashed line of each bot is its conservative rating μ − 3σ when `conservative` is set.
/// `id` names the chart in its page (its title is `{id}-title`): unique per page, so that
/// a page of several charts has no two elements of one id.
pub(super) fn rating_chart(
    series: &[RatingSeries],
    id: &str,
    title: &str,
    conservative: bool,
) -> String {
    let plot = Plot::of(series, conservative);
    let mut svg = format!(
        "<svg class=\"chart\" id=\"{id}\" viewBox=\"0 0 {CHART_W} {CHART_H}\" role=\"img\" \
         aria-labelledby=\"{id}-title\"><title id=\"{id}-title\">{}</title>",
        escape(title),
        id = escape(id)
    );
    chart_axes(&mut svg, &plot);
    for (i, s) in series.iter().enumerate() {
        chart_series(&mut svg, i, s, &plot, conservative);
    }
    svg.push_str("</svg>");
    svg
}

/// The scales of a rating chart: matches 0..=`last` across, ratings `low..=high` up.
struct Plot {
    last: usize,
    low: f64,
    high: f64,
}

impl Plot {
    /// Scales that hold every point of `series` (and its conservative rating when
    /// `conservative` is set), at least one rating point high.
    fn of(series: &[RatingSeries], conservative: bool) -> Plot {
        let points = series.iter().flat_map(|s| s.points.iter());
        let last = points.clone().map(|(n, _)| *n).max().unwrap_or(1).max(1);
        let values = points.flat_map(|(_, r)| {
            let low = if conservative { r.conservative() } else { r.mu };
            [r.mu, low]
        });
        let (mut low, mut high) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        if !low.is_finite() {
            (low, high) = (0.0, 50.0);
        }
        if high - low < 1.0 {
            high += 0.5;
            low -= 0.5;
        }
        Plot { last, low, high }
    }

    /// Where match `n` stands across.
    fn x(&self, n: usize) -> f64 {
        CHART_LEFT + (CHART_W - CHART_LEFT - CHART_RIGHT) * (n as f64 / self.last as f64)
    }

    /// Where rating `v` stands up.
    fn y(&self, v: f64) -> f64 {
        CHART_TOP
            + (CHART_H - CHART_TOP - CHART_BOTTOM) * (1.0 - (v - self.low) / (self.high - self.low))
    }
}

/// A rating chart's axes and ticks: five on each, and the label across.
fn chart_axes(svg: &mut String, plot: &Plot) {
    write!(
        svg,
        "<g stroke=\"#999\" stroke-width=\"1\"><line x1=\"{CHART_LEFT}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\
         <line x1=\"{CHART_LEFT}\" y1=\"{CHART_TOP}\" x2=\"{CHART_LEFT}\" y2=\"{}\"/></g>",
        CHART_H - CHART_BOTTOM,
        CHART_W - CHART_RIGHT,
        CHART_H - CHART_BOTTOM,
        CHART_H - CHART_BOTTOM
    )
    .expect("writing to a String");
    svg.push_str("<g font-size=\"12\" font-family=\"sans-serif\" fill=\"#333\">");
    let (low, high, last) = (plot.low, plot.high, plot.last);
    for k in 0..=4 {
        let v = low + (high - low) * f64::from(k) / 4.0;
        write!(
            svg,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{v:.1}</text>",
            CHART_LEFT - 6.0,
            plot.y(v) + 4.0
        )
        .expect("writing to a String");
        let n = (last as f64 * f64::from(k) / 4.0).round() as usize;
        write!(
            svg,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{n}</text>",
            plot.x(n),
            CHART_H - CHART_BOTTOM + 16.0
        )
        .expect("writing to a String");
    }
    write!(
        svg,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">match (in schedule order)</text></g>",
        (CHART_LEFT + CHART_W - CHART_RIGHT) / 2.0,
        CHART_H - 6.0
    )
    .expect("writing to a String");
}

/// The `i`-th series' line (μ), and its dashed conservative line when `conservative` is
/// set.
fn chart_series(svg: &mut String, i: usize, s: &RatingSeries, plot: &Plot, conservative: bool) {
    let line = |value: fn(&crate::league::ratings::Rating) -> f64| -> String {
        s.points
            .iter()
            .map(|(n, r)| format!("{:.1},{:.1}", plot.x(*n), plot.y(value(r))))
            .collect::<Vec<_>>()
            .join(" ")
    };
    write!(
        svg,
        "<polyline class=\"series\" data-bot=\"{}\" fill=\"none\" stroke=\"{}\" \
         stroke-width=\"2\" points=\"{}\"><title>{}</title></polyline>",
        escape(&s.bot),
        colour(i),
        line(|r| r.mu),
        escape(&s.bot)
    )
    .expect("writing to a String");
    if conservative {
        write!(
            svg,
            "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1\" \
             stroke-dasharray=\"4 3\" points=\"{}\"/>",
            colour(i),
            line(|r| r.conservative())
        )
        .expect("writing to a String");
    }
}
