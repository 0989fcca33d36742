//! The PNG backend: plotters' bitmap backend with text drawn here, glyph by glyph, from the
//! TrueType font found at run time.
//!
//! plotters 0.3.7's `ab_glyph` text drawing places each glyph at its advance without the
//! glyph's side bearing, so letters land unevenly ("postur e.strict"). This wrapper delegates
//! every shape to `BitMapBackend` and lays text out with `ab_glyph` itself (kerning, bearings,
//! the anchor and the quarter-turn rotations plotters asks for). Must not: draw anything but
//! text differently from plotters.

use ab_glyph::{Font, FontRef, GlyphId, PxScale, ScaleFont, point};
use plotters::prelude::*;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
};

/// `BitMapBackend` with this crate's text.
pub struct GlyphBackend<'a> {
    inner: BitMapBackend<'a>,
    font: FontRef<'static>,
}

type Error<'a> = DrawingErrorKind<<BitMapBackend<'a> as DrawingBackend>::ErrorType>;

impl<'a> GlyphBackend<'a> {
    /// Draws into `pixels` (RGB, `w × h × 3` bytes) with `font`.
    pub fn new(pixels: &'a mut [u8], size: (u32, u32), font: FontRef<'static>) -> Self {
        GlyphBackend {
            inner: BitMapBackend::with_buffer(pixels, size),
            font,
        }
    }

    /// plotters' text size is 1.24 × the em (its SVG backend writes `font-size = size / 1.24`);
    /// ab_glyph's scale is the height from descent to ascent.
    fn scale(&self, size: f64) -> PxScale {
        let em = size / 1.24;
        let units = f64::from(self.font.units_per_em().unwrap_or(1000.0));
        PxScale::from((em * f64::from(self.font.height_unscaled()) / units) as f32)
    }

    /// Glyphs with their caret positions, and the text's width.
    fn layout(&self, text: &str, scale: PxScale) -> (Vec<(GlyphId, f32)>, f32) {
        let scaled = self.font.as_scaled(scale);
        let mut caret = 0.0f32;
        let mut previous: Option<GlyphId> = None;
        let mut glyphs = Vec::with_capacity(text.len());
        for c in text.chars() {
            let id = scaled.glyph_id(c);
            if let Some(p) = previous {
                caret += scaled.kern(p, id);
            }
            glyphs.push((id, caret));
            caret += scaled.h_advance(id);
            previous = Some(id);
        }
        (glyphs, caret)
    }
}

impl<'a> DrawingBackend for GlyphBackend<'a> {
    type ErrorType = <BitMapBackend<'a> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), Error<'a>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), Error<'a>> {
        self.inner.present()
    }

    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Result<(), Error<'a>> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), Error<'a>> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), Error<'a>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), Error<'a>> {
        self.inner.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), Error<'a>> {
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), Error<'a>> {
        self.inner.fill_polygon(vert, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), Error<'a>> {
        self.inner.blit_bitmap(pos, size, src)
    }

    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), Error<'a>> {
        let scale = self.scale(style.size());
        let (_, width) = self.layout(text, scale);
        let height = self.font.as_scaled(scale).height();
        let (w, h) = (width.ceil() as i32, height.ceil() as i32);
        let (w, h) = style.transform().transform(w, h);
        Ok((w.unsigned_abs(), h.unsigned_abs()))
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), Error<'a>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let scale = self.scale(style.size());
        let scaled = self.font.as_scaled(scale);
        let (ascent, descent) = (scaled.ascent(), scaled.descent());
        let (glyphs, width) = self.layout(text, scale);
        let anchor = style.anchor();
        let left = match anchor.h_pos {
            HPos::Left => 0.0,
            HPos::Center => -width / 2.0,
            HPos::Right => -width,
        };
        // The baseline: the box's top plus the ascent.
        let baseline = match anchor.v_pos {
            VPos::Top => ascent,
            VPos::Center => (ascent + descent) / 2.0,
            VPos::Bottom => descent,
        };
        let transform = style.transform();
        let (w, h) = self.get_size();
        let mut result = Ok(());
        for (id, caret) in glyphs {
            let glyph = id.with_scale_and_position(scale, point(left + caret, baseline));
            let Some(outline) = self.font.outline_glyph(glyph) else {
                continue;
            };
            let bounds = outline.px_bounds();
            let inner = &mut self.inner;
            outline.draw(|gx, gy, coverage| {
                if coverage <= 0.0 || result.is_err() {
                    return;
                }
                let (dx, dy) = transform.transform(
                    bounds.min.x as i32 + gx as i32,
                    bounds.min.y as i32 + gy as i32,
                );
                let (x, y) = (pos.0 + dx, pos.1 + dy);
                if x >= 0 && y >= 0 && (x as u32) < w && (y as u32) < h {
                    result = inner.draw_pixel(
                        (x, y),
                        BackendColor {
                            alpha: color.alpha * f64::from(coverage.min(1.0)),
                            rgb: color.rgb,
                        },
                    );
                }
            });
        }
        result
    }
}
