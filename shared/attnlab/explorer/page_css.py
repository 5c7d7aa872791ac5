"""The explorer's page style (CSS), sent once with each explorer in a hidden ``HTML`` widget."""
from . import svg

# Sizes in em grow with the font; labels take the width they need (description_width "initial").
PAGE_CSS = """
.attnlab-explorer { font-size: var(--jp-widgets-font-size, 13px); }
.attnlab-explorer .widget-label, .attnlab-explorer .widget-label-basic { overflow: visible; }
.attnlab-explorer .widget-checkbox { width: auto; }
.attnlab-explorer .widget-checkbox .widget-label-basic { width: auto; white-space: nowrap; display: flex;
  align-items: center; gap: 0.3em; }
.attnlab-explorer .widget-checkbox input[type=checkbox] { width: 1em; height: 1em; margin: 0; }
.attnlab-explorer .widget-dropdown select { width: auto; max-width: 100%; }
.attnlab-explorer :is(select, input, button):focus-visible { outline: 3px solid #1a5fb4 !important; outline-offset: 1px; }
.attnlab-lang-zh, .attnlab-lang-zh select, .attnlab-lang-zh input, .attnlab-lang-zh button {
  font-family: %(zh_font)s; }
/* The controls: a grid of equal cells, so that how many rows they take depends on the width and on
   which controls are shown, never on the language of their labels (the heatmap does not move). */
.attnlab-controls { display: grid !important; grid-template-columns: repeat(auto-fill, minmax(14em, 1fr));
  gap: 0.25em 1.2em; align-items: center; }
.attnlab-controls > * { width: auto !important; min-width: 0; max-width: none !important; margin: 0 !important; }
.attnlab-controls > :is(.attnlab-control-sentence, .attnlab-control-model, .attnlab-control-pad) { grid-column: span 2; }
.attnlab-controls .widget-label { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 60%; }
.attnlab-controls .widget-dropdown > select, .attnlab-controls .widget-text > input { flex: 1 1 auto; min-width: 0; }
.attnlab-controls .widget-hslider .slider-container { min-width: 3em; }
.attnlab-notes { min-height: 2.8em; }
.attnlab-note, .attnlab-message { line-height: 1.4; white-space: normal; }
.attnlab-fixed-word { font-weight: 600; border: 1px solid #999; border-radius: 3px; padding: 0 0.3em;
  margin-right: 0.4em; font-size: 0.9em; }
.attnlab-prose { max-width: 60em; line-height: 1.5; }
/* Fit the screen: in Voilà (body.jp-Notebook) and in JupyterLab / Notebook 7 (the notebook is the
   size container), the controls, the heatmap with its labels and legend, and the notes take one
   screen; the drawing shrinks to the height left under the controls. Elsewhere (VS Code, Colab:
   outputs in frames sized to their content) the drawing keeps the output's width. */
.jp-NotebookPanel-notebook { container: attnlab-notebook / size; }
body.jp-Notebook .attnlab-screen { height: calc(100vh - 24px); min-height: 24em; }
.jp-NotebookPanel .attnlab-screen { height: calc(100cqh - 24px); min-height: 24em; }
:is(body.jp-Notebook, .jp-NotebookPanel) .attnlab-screen > .attnlab-heatmap { flex: 1 1 0; min-height: 0; }
:is(body.jp-Notebook, .jp-NotebookPanel) .attnlab-heatmap > .widget-html-content { height: 100%; }
:is(body.jp-Notebook, .jp-NotebookPanel) .attnlab-fig { height: 100%; display: flex; flex-direction: column; }
:is(body.jp-Notebook, .jp-NotebookPanel) .attnlab-fig > * { flex: none; }
:is(body.jp-Notebook, .jp-NotebookPanel) .attnlab-fig > .attnlab-svg { flex: 0 1 auto; min-height: 0; }
.attnlab-projector { --jp-widgets-font-size: 20px; --jp-widgets-inline-height: 36px; font-size: 20px; }
.attnlab-projector .widget-label, .attnlab-projector .widget-label-basic, .attnlab-projector .widget-readout,
.attnlab-projector select, .attnlab-projector input, .attnlab-projector .widget-html-content,
.attnlab-projector button { font-size: 20px !important; line-height: 1.4; }
.attnlab-projector .widget-dropdown, .attnlab-projector .widget-text, .attnlab-projector .widget-checkbox,
.attnlab-projector .widget-hslider, .attnlab-projector select, .attnlab-projector input,
.attnlab-projector .widget-toggle-button { min-height: 36px; height: auto; }
.attnlab-projector .widget-label-basic span, .attnlab-projector .widget-label { line-height: 36px; }
.attnlab-projector .attnlab-controls { grid-template-columns: repeat(auto-fill, minmax(13em, 1fr)); }
.attnlab-projector .attnlab-controls > .attnlab-control-sentence { grid-column: span 1; }
.attnlab-projector .attnlab-notes { min-height: 1.4em; }
/* Large font: the figure's title and legend at 2.6 % of the window's height (20 px at least), like
   the SVG's labels (svg.LARGE_HEIGHT); the hover hint wraps (a line of its own, never wider than the output). */
.attnlab-projector .attnlab-heatmap .widget-html-content, .attnlab-projector .attnlab-fig {
  font-size: max(20px, 2.6vh) !important; }
.attnlab-projector .attnlab-fig .attnlab-legend { font-size: 1em; }
""".replace("%(zh_font)s", svg.ZH_FONT_FAMILY)
