import type { ComponentChildren } from 'preact';

interface Props {
  label: string;
  onClick: (event: MouseEvent) => void;
  children: ComponentChildren;
  pressed?: boolean;
  class?: string;
  expanded?: boolean;
}

/** A round icon button; its accessible name (and tooltip) is `label`. */
export function IconButton({ label, onClick, children, pressed, expanded, class: className }: Props) {
  return (
    <button
      type="button"
      class={`icon-button ${className ?? ''}`}
      aria-label={label}
      title={label}
      aria-pressed={pressed}
      aria-expanded={expanded}
      onClick={(event) => {
        event.stopPropagation();
        onClick(event);
      }}
    >
      {children}
    </button>
  );
}
