//! Hands and their ranks: Schocken (§2.2), Sjokken (§3.2) and Zokken's figures (§4.4).

use std::fmt;

use serde::{Deserialize, Serialize};

/// The faces of Miwin's dice III, IV and V, in die slots 0, 1, 2 (RULES.md §4.1).
pub const MIWIN_FACES: [[u8; 6]; 3] = [[1, 2, 5, 6, 7, 9], [1, 3, 4, 5, 8, 9], [2, 3, 4, 6, 7, 8]];

/// The names of Miwin's dice in slots 0, 1, 2.
pub const MIWIN_NAMES: [&str; 3] = ["III", "IV", "V"];

/// A hand of three dice, named and ranked by its game's table.
///
/// Numbers carried are the hand's distinguishing values: the third die of a Schock, the
/// face of a General or Harde, the top die of a straight, the number of a Number (665), the
/// pip sum of a Hoog, the dice sorted high to low of a Zokken figure.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Hand {
    /// Schocken 1-1-1.
    SchockOut,
    /// Schocken 4-2-1 under variant `jule`.
    Jule,
    /// Schocken 1-1-x: the third die x (2..=6).
    Schock(u8),
    /// Schocken x-x-x, x = 2..=6.
    General(u8),
    /// Schocken straight, by its top die (3..=6).
    Straight(u8),
    /// Schocken number: the dice read high to low (665 ... 221).
    Number(u16),
    /// Sjokken 1-1-1.
    Sjok1,
    /// Sjokken 1-1-x: the third die x (2..=6).
    Sjok(u8),
    /// Sjokken x-x-x, x = 2..=6.
    Harde(u8),
    /// Sjokken straight, by its top die (3..=6).
    Straat(u8),
    /// Sjokken anything else, by the pip sum.
    Hoog(u8),
    /// Zokken 9-3-3.
    Kelm,
    /// Zokken 6-3-3, 4-2-2 or 2-1-1 (dice high to low).
    Tinn([u8; 3]),
    /// Zokken three consecutive values, by the top die.
    Strasse(u8),
    /// Zokken: one die is the sum of the other two (dice high to low); 7-5-2 is the Schlumpf.
    Plus([u8; 3]),
    /// Zokken: two equal dice (dice high to low).
    Pasch([u8; 3]),
    /// Zokken: anything else (dice high to low).
    Sonst([u8; 3]),
}

/// Sorts three dice high to low.
#[inline]
pub const fn sorted_desc(dice: [u8; 3]) -> [u8; 3] {
    let [mut a, mut b, mut c] = dice;
    if a < b {
        std::mem::swap(&mut a, &mut b);
    }
    if b < c {
        std::mem::swap(&mut b, &mut c);
    }
    if a < b {
        std::mem::swap(&mut a, &mut b);
    }
    [a, b, c]
}

/// Whether sorted-descending dice are three consecutive values.
#[inline]
const fn consecutive([a, b, c]: [u8; 3]) -> bool {
    a == b + 1 && b == c + 1
}

impl Hand {
    /// Schocken's hand for `dice`. `jule` is the variant; `straight_counts` is false when
    /// variant `straight_in_one_throw` is on and the dice were not all rolled together in
    /// the player's last throw.
    pub const fn schocken(dice: [u8; 3], jule: bool, straight_counts: bool) -> Hand {
        let d = sorted_desc(dice);
        match d {
            [1, 1, 1] => Hand::SchockOut,
            [4, 2, 1] if jule => Hand::Jule,
            [x, 1, 1] => Hand::Schock(x),
            [x, y, z] if x == y && y == z => Hand::General(x),
            _ if straight_counts && consecutive(d) => Hand::Straight(d[0]),
            [x, y, z] => Hand::Number(x as u16 * 100 + y as u16 * 10 + z as u16),
        }
    }

    /// Sjokken's hand for `dice`.
    pub const fn sjokken(dice: [u8; 3]) -> Hand {
        let d = sorted_desc(dice);
        match d {
            [1, 1, 1] => Hand::Sjok1,
            [x, 1, 1] => Hand::Sjok(x),
            [x, y, z] if x == y && y == z => Hand::Harde(x),
            _ if consecutive(d) => Hand::Straat(d[0]),
            [x, y, z] => Hand::Hoog(x + y + z),
        }
    }

    /// Zokken's figure for the face values `dice` (any order).
    pub fn zokken(dice: [u8; 3]) -> Hand {
        let d = sorted_desc(dice);
        let [a, b, c] = d;
        if d == [9, 3, 3] {
            Hand::Kelm
        } else if b == c && a == b + c {
            // 6-3-3, 4-2-2, 2-1-1 (and 8-4-4, 18-9-9... which Miwin's dice cannot show).
            Hand::Tinn(d)
        } else if consecutive(d) {
            Hand::Strasse(a)
        } else if a == b + c {
            Hand::Plus(d)
        } else if a == b || b == c {
            Hand::Pasch(d)
        } else {
            Hand::Sonst(d)
        }
    }

    /// Whether this is Zokken's Schlumpf, 7-5-2.
    pub fn is_schlumpf(&self) -> bool {
        *self == Hand::Plus([7, 5, 2])
    }

    /// A number that orders hands of one game: higher is better, equal means equal hands.
    ///
    /// For Zokken this is the order without the Schlumpf's table rule; use
    /// [`Hand::zokken_table_strength`] to rank the hands on a table.
    pub fn strength(&self) -> u32 {
        const C: u32 = 100_000;
        let dice = |d: [u8; 3]| d[0] as u32 * 100 + d[1] as u32 * 10 + d[2] as u32;
        match *self {
            Hand::SchockOut | Hand::Sjok1 => 9 * C,
            Hand::Jule => 8 * C,
            Hand::Schock(x) | Hand::Sjok(x) => 7 * C + x as u32,
            Hand::General(x) | Hand::Harde(x) => 6 * C + x as u32,
            Hand::Straight(x) | Hand::Straat(x) => 5 * C + x as u32,
            Hand::Number(n) => n as u32,
            Hand::Hoog(sum) => sum as u32,
            Hand::Kelm => 5 * C,
            Hand::Tinn(d) => 4 * C + dice(d),
            Hand::Strasse(x) => 3 * C + x as u32,
            Hand::Plus(d) => 2 * C + dice(d),
            Hand::Pasch(d) => C + dice(d),
            Hand::Sonst(d) => (d[0] + d[1] + d[2]) as u32 * 1000 + dice(d),
        }
    }

    /// Zokken: the strength of this figure on a table where `kelm_on_table` says whether
    /// any of the hands still in the round is a Kelm (then a Schlumpf beats everything).
    pub fn zokken_table_strength(&self, kelm_on_table: bool) -> u32 {
        if kelm_on_table && self.is_schlumpf() {
            6 * 100_000
        } else {
            self.strength()
        }
    }

    /// Schocken and Sjokken: the tokens this hand is worth when it is the round's best
    /// (`tokens` is the game's token count, what a Schock out is worth). SJOK1 is worth none.
    pub fn value(&self, tokens: u8) -> u8 {
        match *self {
            Hand::SchockOut => tokens,
            Hand::Jule => 7,
            Hand::Schock(x) | Hand::Sjok(x) => x,
            Hand::General(_) | Hand::Harde(_) => 3,
            Hand::Straight(_) | Hand::Straat(_) => 2,
            Hand::Number(_) | Hand::Hoog(_) => 1,
            _ => 0,
        }
    }
}

impl fmt::Display for Hand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dice = |f: &mut fmt::Formatter<'_>, d: [u8; 3]| write!(f, "{}-{}-{}", d[0], d[1], d[2]);
        match *self {
            Hand::SchockOut => write!(f, "schock out"),
            Hand::Jule => write!(f, "jule"),
            Hand::Schock(x) => write!(f, "schock {x}"),
            Hand::General(x) => write!(f, "general {x}"),
            Hand::Straight(x) => write!(f, "straight {}-{}-{x}", x - 2, x - 1),
            Hand::Number(n) => write!(f, "number {n}"),
            Hand::Sjok1 => write!(f, "sjok1"),
            Hand::Sjok(x) => write!(f, "sjok {x}"),
            Hand::Harde(x) => write!(f, "harde {x}"),
            Hand::Straat(x) => write!(f, "straat {}-{}-{x}", x - 2, x - 1),
            Hand::Hoog(sum) => write!(f, "hoog {sum}"),
            Hand::Kelm => write!(f, "kelm"),
            Hand::Tinn(d) => {
                write!(f, "tinn ")?;
                dice(f, d)
            }
            Hand::Strasse(x) => write!(f, "strasse {}-{}-{x}", x - 2, x - 1),
            Hand::Plus(d) if self.is_schlumpf() => {
                write!(f, "schlumpf ")?;
                dice(f, d)
            }
            Hand::Plus(d) => {
                write!(f, "plus ")?;
                dice(f, d)
            }
            Hand::Pasch(d) => {
                write!(f, "pasch ")?;
                dice(f, d)
            }
            Hand::Sonst(d) => {
                write!(f, "sonst ")?;
                dice(f, d)
            }
        }
    }
}
