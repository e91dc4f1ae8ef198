# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What go-yaml's emitter writes differently from PyYAML's emitters, for the collection's YAML writers
(api/objects.py's spec dumper, addons/channel.py's manifests, nodeup/goyaml.py's node files).

go-yaml's emitter is a port of libyaml's, which PyYAML's C classes wrap; PyYAML's Python emitter
differs in how it folds double-quoted scalars, and libyaml in one marker go-yaml's port dropped.
"""

from __future__ import annotations

# go-yaml's named escapes in a double-quoted scalar (every other unprintable character is \xXX, \uXXXX or \UXXXXXXXX).
ESCAPES = {"\0": "0", "\x07": "a", "\b": "b", "\t": "t", "\n": "n", "\x0b": "v", "\x0c": "f", "\r": "r",
           "\x1b": "e", '"': '"', "\\": "\\", "\x85": "N", "\xa0": "_", "\u2028": "L", "\u2029": "P"}
# Escaped whatever the character set: quotes, backslashes, line breaks and the byte order mark.
ALWAYS_ESCAPED = '"\\\r\n\x85\u2028\u2029\ufeff'


class GoDoubleQuoted(object):
    """PyYAML's Python emitter taught libyaml's yaml_emitter_write_double_quoted_scalar, as go-yaml has it.

    PyYAML breaks before a space that would pass the width, ending the line with an escape; go-yaml
    breaks at the first space once the column is past the width (lines run over it), with no escape
    but a `\\` before a space that follows the break.  (libyaml's own emitter needs no teaching.)
    """

    def write_double_quoted(self, text, split=True):
        self.write_indicator('"', True)
        spaces = False
        for index, char in enumerate(text):
            if char in ALWAYS_ESCAPED or not _printable(char, self.allow_unicode):
                self._put("\\" + _escape(char))
                spaces = False
            elif char == " ":
                if split and not spaces and self.column > self.best_width and 0 < index < len(text) - 1:
                    self.write_indent()
                    if text[index + 1] == " ":
                        self._put("\\")
                else:
                    self._put(char)
                spaces = True
            else:
                self._put(char)
                spaces = False
        self.write_indicator('"', False)

    def _put(self, data):
        self.column += len(data)
        self.stream.write(data.encode(self.encoding) if self.encoding else data)


def _printable(char, allow_unicode):
    """go-yaml's is_printable (and ASCII only without allow_unicode)."""
    code = ord(char)
    if code < 0x80:
        return 0x20 <= code <= 0x7E
    return allow_unicode and (code == 0x85 or 0xA0 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD
                              or 0x10000 <= code <= 0x10FFFF) and code != 0xFEFF


def _escape(char):
    if char in ESCAPES:
        return ESCAPES[char]
    code = ord(char)
    return ("x%02X" if code <= 0xFF else "u%04X" if code <= 0xFFFF else "U%08X") % code


def without_document_end(text):
    """A dumped document without the end marker (`...`) libyaml writes after one that holds a block scalar keeping
    its final line breaks (|+; libyaml's open_ended state): go-yaml's port of libyaml writes none, nor do kops' files
    (kops' nodeup fixture containerdbuilder/complex/tasks.yaml).  A line of three dots at the margin is only ever that marker."""
    return text[:-4] if text.endswith("\n...\n") else text
