import { useRef } from 'react';
import type { RulesIssue } from './rules-api';

/** A textarea with a line-number gutter; lines with issues are marked and named by their messages. */
export function RulesEditor({ value, onChange, issues, label }: { value: string; onChange: (next: string) => void; issues: RulesIssue[]; label: string }) {
  const gutter = useRef<HTMLDivElement>(null);
  const lineCount = value.split('\n').length;
  const byLine = new Map<number, RulesIssue[]>();
  for (const issue of issues) byLine.set(issue.line, [...(byLine.get(issue.line) ?? []), issue]);
  return (
    <div className="console-editor">
      <div className="console-gutter" ref={gutter} aria-hidden="true">
        {Array.from({ length: lineCount }, (_, index) => {
          const found = byLine.get(index + 1);
          return (
            <div key={index} className={found ? 'console-gutter-error' : undefined} data-line={index + 1} title={found?.map((issue) => issue.message).join('\n')}>
              {found ? '● ' : ''}
              {index + 1}
            </div>
          );
        })}
      </div>
      <textarea
        aria-label={label}
        spellCheck={false}
        value={value}
        rows={Math.max(12, Math.min(lineCount + 1, 40))}
        onChange={(event) => onChange(event.target.value)}
        onScroll={(event) => {
          if (gutter.current) gutter.current.scrollTop = event.currentTarget.scrollTop;
        }}
        onKeyDown={(event) => {
          // Tab indents instead of leaving the editor; Escape then Tab still moves focus on.
          if (event.key !== 'Tab' || event.shiftKey) return;
          const area = event.currentTarget;
          if (area.dataset.escaped === '1') return;
          event.preventDefault();
          const { selectionStart, selectionEnd } = area;
          onChange(`${value.slice(0, selectionStart)}  ${value.slice(selectionEnd)}`);
          requestAnimationFrame(() => area.setSelectionRange(selectionStart + 2, selectionStart + 2));
        }}
        onKeyUp={(event) => {
          event.currentTarget.dataset.escaped = event.key === 'Escape' ? '1' : '';
        }}
      />
    </div>
  );
}

/** The issues as a list of "Line N, column C: message" entries that move the caret there when picked. */
export function IssueList({ issues }: { issues: RulesIssue[] }) {
  if (!issues.length) return null;
  return (
    <ul className="console-issues" data-testid="rules-issues" role="alert">
      {issues.map((issue, index) => (
        <li key={index} data-line={issue.line} className={issue.severity === 'WARNING' ? 'console-warning' : 'console-error'}>
          Line {issue.line}, column {issue.column}: {issue.message}
        </li>
      ))}
    </ul>
  );
}
