#ifndef MULTIDOC_CNCURSES_SHIM_H
#define MULTIDOC_CNCURSES_SHIM_H
#define NCURSES_WIDECHAR 1
#define _XOPEN_SOURCE_EXTENDED 1
#include <locale.h>
#include <ncursesw/curses.h>

/* Swift 6 rejects the globals and cannot import the macros: wrap them. */
static inline WINDOW *multidoc_stdscr(void) { return stdscr; }
static inline int multidoc_lines(void) { return LINES; }
static inline int multidoc_cols(void) { return COLS; }
static inline int multidoc_a_bold(void) { return (int)A_BOLD; }
static inline int multidoc_a_dim(void) { return (int)A_DIM; }
static inline int multidoc_a_reverse(void) { return (int)A_REVERSE; }
static inline int multidoc_a_underline(void) { return (int)A_UNDERLINE; }
static inline int multidoc_color_pair(int n) { return (int)COLOR_PAIR(n); }
static inline int multidoc_key_f(int n) { return KEY_F(n); }
static inline int multidoc_key_resize(void) { return KEY_RESIZE; }
static inline int multidoc_key_up(void) { return KEY_UP; }
static inline int multidoc_key_down(void) { return KEY_DOWN; }
static inline int multidoc_key_left(void) { return KEY_LEFT; }
static inline int multidoc_key_right(void) { return KEY_RIGHT; }
static inline int multidoc_key_enter(void) { return KEY_ENTER; }
static inline int multidoc_key_backspace(void) { return KEY_BACKSPACE; }
static inline int multidoc_key_dc(void) { return KEY_DC; }
static inline int multidoc_key_home(void) { return KEY_HOME; }
static inline int multidoc_key_end(void) { return KEY_END; }
static inline int multidoc_ok(void) { return OK; }
static inline int multidoc_err(void) { return ERR; }
static inline int multidoc_key_code_yes(void) { return KEY_CODE_YES; }
static inline int multidoc_lc_all(void) { return LC_ALL; }

/* Added for multidoc-tui. */
#include <stdio.h>
/* newterm on the process's own stdin/stdout: unlike initscr it returns NULL instead of exiting
   when the terminal cannot be set up (bad TERM), so the app can say why. */
static inline SCREEN *multidoc_newterm(void) { return newterm(NULL, stdout, stdin); }
static inline int multidoc_attrset(WINDOW *win, int attrs) { return wattrset(win, attrs); }
static inline int multidoc_attron(WINDOW *win, int attrs) { return wattron(win, attrs); }
static inline int multidoc_attroff(WINDOW *win, int attrs) { return wattroff(win, attrs); }
/* Draws UTF-8 text at (y, x); with the locale set, ncursesw decodes it into wide characters. */
static inline int multidoc_mvaddstr(WINDOW *win, int y, int x, const char *text) {
    return mvwaddstr(win, y, x, text);
}
static inline int multidoc_maxy(WINDOW *win) { return getmaxy(win); }
static inline int multidoc_maxx(WINDOW *win) { return getmaxx(win); }
static inline int multidoc_key_npage(void) { return KEY_NPAGE; }
static inline int multidoc_key_ppage(void) { return KEY_PPAGE; }
static inline int multidoc_a_normal(void) { return (int)A_NORMAL; }
/* Columns a Unicode scalar takes under the current locale (-1: not printable). */
static inline int multidoc_wcwidth(unsigned int scalar) { return wcwidth((wchar_t)scalar); }
#endif
