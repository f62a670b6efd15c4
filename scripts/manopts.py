#!/usr/bin/env python3
"""Reads the OPTIONS section of a daemon's man page source (scdoc), the one place an option is
documented, and prints what is derived from it.

  manopts.py options PAGE.scd            every option the page documents, one name per line
  manopts.py conf PAGE.scd PROG PATH     the example configuration file PROG reads from PATH

Conventions of the OPTIONS section (see verifier/verifier.8.scd):
  *--name* _VALUE_        an option heading (a switch has no _VALUE_), at the start of a line
  <TAB>text...            its description, tab-indented, until the next unindented line
  "Default: _X_."         in the description: the value the example file shows
  "Command line only."    in the description: not a key of the file (--config, --help, ...)
Exits 1 with a message when the section is missing or names no option.
"""
import re
import sys
import textwrap

HEADING = re.compile(r'^\*--([a-z0-9][a-z0-9-]*)\*(?:\s+_([^_]+)_)?\s*$')


def options(path):
    """[(name, metavariable or None, description text)] in page order."""
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    in_section, out, cur = False, [], None
    for line in lines:
        if line.startswith('# '):
            in_section = line.strip() == '# OPTIONS'
            cur = None
            continue
        if not in_section:
            continue
        m = HEADING.match(line)
        if m:
            cur = [m.group(1), m.group(2), []]
            out.append(cur)
        elif line.startswith('\t') and cur is not None:
            cur[2].append(line.strip())
        elif line.strip() and cur is not None:
            cur = None
    if not out:
        sys.exit(f'manopts: {path}: no *--option* headings under "# OPTIONS"')
    return [(n, a, ' '.join(t for t in d if t)) for n, a, d in out]


def plain(text):
    """scdoc markup to plain text: *bold*, _underline_, escapes."""
    text = re.sub(r'(?<!\\)\*([^*]+)\*', r'\1', text)
    # scdoc toggles underline only at a '_' that does not join two word characters.
    text = re.sub(r'(?<![\\\w])_(.+?)_(?!\w)', r'\1', text)
    return text.replace('\\*', '*').replace('\\_', '_').replace('\\\\', '\\')


def conf(path, prog, conf_path):
    out = [f'# {conf_path}: settings of {prog}(8), one `key = value` per line;',
           f'# the format is in {prog}.conf(5). Keys are the long options without "--"; an',
           '# option given on the command line wins over this file. Each line below shows a',
           '# default, or what a value looks like, commented out. Generated from',
           f'# {prog}(8), where every option is described.',
           '']
    for name, arg, desc in options(path):
        if 'Command line only.' in desc:
            continue
        m = re.search(r'Default: _(.+?)_(?!\w)', desc)
        value = m.group(1) if m else (plain(arg) if arg else 'false')
        for line in textwrap.wrap(plain(desc), 76):
            out.append('# ' + line)
        out.append(f'#{name} = {value}')
        out.append('')
    return '\n'.join(out)


def main(argv):
    if len(argv) == 3 and argv[1] == 'options':
        for name, _, _ in options(argv[2]):
            print(name)
    elif len(argv) == 5 and argv[1] == 'conf':
        print(conf(argv[2], argv[3], argv[4]), end='')
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main(sys.argv)
