"""A corpus of hostile SVG files, generated (not stored): each one has
crashed, hung or exhausted a renderer somewhere. write_corpus(dir) writes
them and returns their names."""
import os

NS = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'


def corpus():
    c = {}
    c["xinclude-self"] = (
        f'<svg {NS} xmlns:xi="http://www.w3.org/2001/XInclude" width="16" height="16">'
        '<xi:include href="xinclude-self.svg"/><xi:include href="/etc/passwd" parse="text"/>'
        '</svg>')
    lol = '<!DOCTYPE svg [<!ENTITY a0 "lollollollollollollollollollol">'
    for i in range(1, 10):
        lol += f'<!ENTITY a{i} "' + f"&a{i-1};" * 10 + '">'
    c["billion-laughs"] = lol + f']><svg {NS} width="16" height="16"><text>&a9;</text></svg>'
    c["huge-canvas"] = (f'<svg {NS} width="1000000" height="1000000">'
                        '<rect width="1000000" height="1000000" fill="red"/></svg>')
    uses = "".join(f'<use xlink:href="#r" x="{i % 7}"/>' for i in range(500000))
    c["many-uses"] = f'<svg {NS} width="16" height="16"><defs><rect id="r" width="1" height="1"/></defs>{uses}</svg>'
    # each level references the previous one ten times: 10^12 instances
    defs = '<rect id="u0" width="1" height="1"/>'
    for i in range(1, 13):
        defs += f'<g id="u{i}">' + f'<use xlink:href="#u{i-1}"/>' * 10 + "</g>"
    c["use-bomb"] = f'<svg {NS} width="16" height="16"><defs>{defs}</defs><use xlink:href="#u12"/></svg>'
    # more than 9 s of librsvg's time on this machine (600 filters took
    # 4.4 s, too near the 5-s deadline to fail every time)
    filt = "".join(
        f'<filter id="f{i}" x="-100" y="-100" width="200" height="200" filterUnits="userSpaceOnUse">'
        f'<feMorphology radius="500"/><feGaussianBlur stdDeviation="300"/></filter>'
        for i in range(1800))
    rects = "".join(f'<g filter="url(#f{i})"><rect width="16" height="16"/></g>' for i in range(1800))
    c["heavy-filters"] = f'<svg {NS} width="16" height="16" viewBox="0 0 16 16"><defs>{filt}</defs>{rects}</svg>'
    c["deep-nesting"] = f'<svg {NS} width="16" height="16">' + "<g>" * 200000 + "</g>" * 200000 + "</svg>"
    c["truncated"] = f'<svg {NS} width="16" height="16"><rect width="16" hei'
    c["binary-garbage"] = bytes(range(256)) * 64
    c["empty"] = ""
    c["external-passwd"] = (f'<svg {NS} width="16" height="16">'
                            '<image xlink:href="file:///etc/passwd" width="16" height="16"/>'
                            '<image xlink:href="/etc/passwd" width="16" height="16"/></svg>')
    return c


def write_corpus(directory):
    os.makedirs(directory, exist_ok=True)
    names = []
    for name, content in corpus().items():
        data = content if isinstance(content, bytes) else content.encode()
        with open(os.path.join(directory, name + ".svg"), "wb") as f:
            f.write(data)
        names.append(name)
    return names
