#!/usr/bin/env python3
"""What a reader learned from the corpus makes of the next unseen set (issue 15's 97%).

Not part of the suite: an analysis, run by hand. For each of sets 9-19 it rebuilds, from git
history, the corpus as it stood before the set (the training rows) and the set itself (the rows
the commit appended), then prints, per set and in all:
  - the table's first read (the classifier at the commit before the set was added);
  - logistic regression over words, codes and character n-grams, trained on the rows before;
  - the two together, in the ways a product could combine them;
  - how many of the set's replies have a near neighbour (cosine >= 0.6 over character n-grams)
    in the rows before it, and how many of those share its label.

Needs Debian's scikit-learn (`apt-get install python3-sklearn`, run with /usr/bin/python3) and a
checkout whose `pnpm install` has run (the first reads run in temporary worktrees, installed
offline). Run from the repository root:
    /usr/bin/python3 packages/providers/test/corpus/learned-baseline.py
"""
import json
import os
import re
import subprocess
import sys
import tempfile

from scipy.sparse import hstack
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

CORPUS = 'packages/providers/test/corpus/replies.jsonl'
# (set, the commit that appended it, how many rows it appended)
SETS = [(9, 'e429c15', 350), (10, 'ac75857', 140), (11, 'ca76ebb', 132), (12, 'da39fb3', 142),
        (13, '04f12e7', 86), (14, 'bbc85a9', 143), (15, 'c101640', 53), (16, 'ee0bc68', 57),
        (17, '51c733a', 298), (18, '7ea88d3', 255), (19, '01481c3', 105)]
PERMANENT = {'bad_recipient', 'bad_domain', 'policy_block', 'content_rejected', 'mailbox_full'}
DEFERRALS = {'throttled', 'quota_exhausted', 'greylisted', 'reputation_deferral', 'mailbox_temporary',
             'transient_system'}
NOT_THE_ADDRESS = {'policy_block', 'reputation_deferral', 'throttled'}
NEAR = 0.6
# One row per reply: the family the classifier of that checkout gives (test/corpus.ts's reading).
FIRST_READ = """import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadCorpus, score } from './corpus.js';
for (const r of score(loadCorpus(pathToFileURL(resolve(process.argv[2]!))))) console.log(r.got.family);
"""


def severe(expected, got):
    """As test/corpus.ts: a deferral read as permanent, or a verdict on the sender read as a bad address."""
    return (expected in DEFERRALS and got in PERMANENT) or (expected in NOT_THE_ADDRESS and got == 'bad_recipient')


def rows_at(commit):
    text = subprocess.run(['git', 'show', f'{commit}:{CORPUS}'], check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def first_read(commit, rows):
    """The families the classifier at `commit` gives `rows`, read in a throwaway worktree."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, 'tree')
        subprocess.run(['git', 'worktree', 'add', '-f', '--detach', tree, commit], check=True, capture_output=True)
        try:
            subprocess.run(['pnpm', 'install', '--frozen-lockfile', '--offline'], cwd=tree, check=True,
                           capture_output=True)
            with open(os.path.join(tree, 'packages/providers/test/first-read.ts'), 'w') as f:
                f.write(FIRST_READ)
            set_file = os.path.join(tmp, 'set.jsonl')
            with open(set_file, 'w') as f:
                f.writelines(json.dumps(r) + '\n' for r in rows)
            out = subprocess.run(['node', '--conditions=@sluice/source', '--import', 'tsx',
                                  'packages/providers/test/first-read.ts', set_file], cwd=tree, check=True,
                                 capture_output=True, text=True).stdout
            return out.split()
        finally:
            subprocess.run(['git', 'worktree', 'remove', '--force', tree], capture_output=True)


def codes(reply):
    """The basic code, its class and the enhanced code as tokens of their own."""
    basic = re.match(r'\s*(?:SMTP Error:?\s*)?(\d{3})', reply, re.I)
    enhanced = re.search(r'(?<![\d.])([245])\.(\d{1,3})\.(\d{1,3})(?![.\d])', reply)
    out = []
    if basic:
        out += ['_b' + basic.group(1), '_c' + basic.group(1)[0]]
    if enhanced:
        out += ['_e' + '_'.join(enhanced.groups()), '_ec' + '_'.join(enhanced.groups()[:2])]
    return ' '.join(out)


def learn(train):
    words = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True,
                            token_pattern=r'[A-Za-z_][\w.]+|\d\.\d+\.\d+|\d{3}')
    chars = TfidfVectorizer(analyzer='char_wb', ngram_range=(3, 5), min_df=2, sublinear_tf=True)
    as_words = lambda rows: [f"{r['reply']} {codes(r['reply'])} _via{r.get('via', '')}" for r in rows]
    as_chars = lambda rows: [r['reply'].lower() for r in rows]
    x = hstack([words.fit_transform(as_words(train)), chars.fit_transform(as_chars(train))]).tocsr()
    model = LogisticRegression(C=20, max_iter=3000).fit(x, [r['family'] for r in train])
    features = lambda rows: hstack([words.transform(as_words(rows)), chars.transform(as_chars(rows))]).tocsr()
    return model, features, chars


READERS = {
    'the table (first read)': lambda table, model: table,
    'logistic regression alone': lambda table, model: model,
    'the table; the model where it says unknown': lambda table, model: model if table == 'unknown' else table,
    'the table; the model where it says unknown, not permanent':
        lambda table, model: model if table == 'unknown' and model not in PERMANENT else table,
    'the model; the table where the model says permanent and differs':
        lambda table, model: table if model in PERMANENT and model != table else model,
}


def main():
    totals = {name: [0, 0] for name in READERS}
    near_total = same_total = count = 0
    for number, commit, size in SETS:
        rows = rows_at(commit)
        train, test = rows[:-size], rows[-size:]
        table = first_read(f'{commit}^', test)
        model, features, chars = learn(train)
        guesses = model.predict(features(test))
        similarity = (chars.transform([r['reply'].lower() for r in test]) @
                      chars.transform([r['reply'].lower() for r in train]).T).toarray()
        near = similarity.max(1) >= NEAR
        same = [bool(near[i]) and train[similarity[i].argmax()]['family'] == r['family'] for i, r in enumerate(test)]
        line = [f'set {number:2d} ({size:3d})']
        for name, read in READERS.items():
            got = [read(table[i], guesses[i]) for i in range(size)]
            right = sum(g == r['family'] for g, r in zip(got, test))
            bad = sum(severe(r['family'], g) for g, r in zip(got, test))
            totals[name][0] += right
            totals[name][1] += bad
            line.append(f'{100 * right / size:5.1f}% ({bad})')
        near_total += int(near.sum())
        same_total += sum(same)
        count += size
        print(' | '.join(line) + f' | near {100 * near.sum() / size:4.1f}%, same label {100 * sum(same) / size:4.1f}%',
              flush=True)
    print(f'\nall {count} replies of sets 9-19, right (severe misreads):')
    for name, (right, bad) in totals.items():
        print(f'  {name:64s} {100 * right / count:5.1f}% ({bad})')
    print(f'  a near neighbour (cosine >= {NEAR}) in the corpus before the set: {100 * near_total / count:.1f}%,'
          f' one with the same label: {100 * same_total / count:.1f}%')


if __name__ == '__main__':
    sys.exit(main())
