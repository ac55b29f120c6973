import { jinja } from '@codemirror/lang-jinja';
import { EditorView, basicSetup } from 'codemirror';
import { useEffect, useRef } from 'react';

/** CodeMirror 6 with Jinja highlighting; calls onChange with the whole text on each edit. */
export default function CodeEditor({ value, onChange, label }: { value: string; onChange: (text: string) => void; label: string }) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const changed = useRef(onChange);
  changed.current = onChange;

  useEffect(() => {
    view.current = new EditorView({
      parent: host.current!,
      doc: value,
      extensions: [
        basicSetup,
        jinja(),
        EditorView.contentAttributes.of({ 'aria-label': label }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) changed.current(update.state.doc.toString());
        }),
      ],
    });
    return () => view.current?.destroy();
    // The editor owns its text after creation; a new value comes with a new key.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  return <div ref={host} style={{ border: '1px solid var(--mantine-color-default-border)', minHeight: 240 }} />;
}
