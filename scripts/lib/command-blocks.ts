/**
 * The shell blocks of a Markdown page (```sh, ```bash, ```shell), each with the heading it sits under. CI runs
 * the README's blocks as written, reading each by its heading (`npx tsx scripts/command-block.ts README.md
 * "<heading>"` in .ci/), and `npm run -s lint:docs` fails when a README block is not one CI reads.
 */
export interface CommandBlock {
  heading: string;
  line: number;
  code: string;
}

export function commandBlocks(markdown: string): CommandBlock[] {
  const blocks: CommandBlock[] = [];
  let heading = '';
  let open: CommandBlock | undefined;
  let fenced = false;
  markdown.split('\n').forEach((text, i) => {
    if (open) {
      if (/^```\s*$/.test(text)) {
        blocks.push(open);
        open = undefined;
      } else open.code += `${text}\n`;
      return;
    }
    if (/^```/.test(text)) {
      if (/^```(sh|bash|shell)\s*$/.test(text)) open = { heading, line: i + 1, code: '' };
      else fenced = !fenced; // another language's block: its lines are not headings
      return;
    }
    if (!fenced && /^#{1,6} /.test(text)) heading = text.replace(/^#+ /, '').trim();
  });
  return blocks;
}

/** The headings .ci/ scripts read README blocks by: each `scripts/command-block.ts README.md "<heading>"`. */
export function headingsReadByCi(ciScripts: string[]): Set<string> {
  const read = new Set<string>();
  for (const text of ciScripts) {
    for (const m of text.matchAll(/scripts\/command-block\.ts README\.md "([^"]+)"/g)) read.add(m[1] ?? '');
  }
  return read;
}
