/**
 * A deterministic, realistic corpus of notes for the benchmarks: the same seed always gives the
 * same notes (ids included), so runs on different days and machines measure the same work.
 *
 * Text is multilingual (Latin, Cyrillic, Greek, Arabic and CJK scripts), words are drawn with a
 * Zipf-like distribution so that some words are common and most are rare, and notes carry
 * hashtags. Fractions follow the issue: 20% checklists, 10% archived, 5% trashed, 5% with an image.
 */

/** mulberry32: a tiny, fast 32-bit PRNG; good enough for test data, not for anything secret. */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Language {
  words: readonly string[];
  /** CJK text is written without spaces between words. */
  separator: string;
  /** Cumulative Zipf weights over `words`, for sampling. */
  cumulative: number[];
}

function language(words: string, separator = ' '): Language {
  const list = words.split(/\s+/).filter(Boolean);
  let total = 0;
  const cumulative = list.map((_, rank) => {
    total += 1 / (rank + 1);
    return total;
  });
  return { words: list, separator, cumulative: cumulative.map((c) => c / total) };
}

/** Most frequent word first. English "meeting" is the common word the search benchmark looks for. */
const LANGUAGES: readonly Language[] = [
  language(`meeting project today call review plan budget report draft idea team client week
    monday friday morning evening list groceries milk bread coffee book read write garden trip
    flight hotel train ticket doctor appointment birthday gift recipe dinner lunch code release
    deploy server bug fix feature design sketch notes summary quarter goals deadline invoice
    payment tax insurance school homework music movie podcast workout run yoga walk paint
    weekend holiday beach mountain river forest city museum concert friend family kids dog`),
  language(`réunion projet aujourd'hui appel revue budget rapport brouillon idée équipe client
    semaine lundi vendredi matin soir liste courses lait pain café livre lire écrire jardin
    voyage vol hôtel train billet médecin rendez-vous anniversaire cadeau recette dîner
    déjeuner fromage vin marché boulangerie été hiver printemps automne musée plage`),
  language(`Besprechung Projekt heute Anruf Überprüfung Budget Bericht Entwurf Idee Team Kunde
    Woche Montag Freitag Morgen Abend Liste Einkaufen Milch Brot Kaffee Buch lesen schreiben
    Garten Reise Flug Hotel Zug Fahrkarte Arzt Termin Geburtstag Geschenk Rezept Abendessen
    Straße Größe Übung Bäckerei Wanderung Fahrrad`),
  language(`reunión proyecto hoy llamada revisión presupuesto informe borrador idea equipo
    cliente semana lunes viernes mañana tarde lista compras leche pan café libro leer escribir
    jardín viaje vuelo hotel tren billete médico cita cumpleaños regalo receta cena almuerzo`),
  language(`встреча проект сегодня звонок обзор бюджет отчёт черновик идея команда клиент
    неделя понедельник пятница утро вечер список покупки молоко хлеб кофе книга читать писать
    сад поездка рейс гостиница поезд билет врач запись подарок рецепт ужин обед`),
  language(`συνάντηση έργο σήμερα κλήση προϋπολογισμός αναφορά ιδέα ομάδα πελάτης εβδομάδα
    πρωί βράδυ λίστα γάλα ψωμί καφές βιβλίο ταξίδι ξενοδοχείο τρένο γιατρός δώρο συνταγή`),
  language(`اجتماع مشروع اليوم مكالمة مراجعة ميزانية تقرير مسودة فكرة فريق عميل أسبوع صباح
    مساء قائمة حليب خبز قهوة كتاب سفر فندق قطار طبيب موعد هدية وصفة عشاء`),
  language(
    `会議 プロジェクト 今日 電話 予算 報告 下書き アイデア チーム 顧客 週 月曜日 金曜日 朝 夜
    リスト 買い物 牛乳 パン コーヒー 本 読む 書く 庭 旅行 飛行機 ホテル 電車 切符 医者 予約
    誕生日 贈り物 レシピ 夕食 昼食 東京 京都 大阪 桜 寿司 ラーメン`,
    '',
  ),
  language(
    `会议 项目 今天 电话 预算 报告 草稿 想法 团队 客户 星期 早上 晚上 清单 购物 牛奶 面包
    咖啡 书 阅读 写作 花园 旅行 航班 酒店 火车 票 医生 预约 生日 礼物 食谱 晚饭 午饭 北京 上海`,
    '',
  ),
  language(`회의 프로젝트 오늘 전화 예산 보고서 초안 아이디어 팀 고객 주 아침 저녁 목록 장보기
    우유 빵 커피 책 여행 호텔 기차 의사 예약 생일 선물 요리법 저녁식사 서울`),
];

/** Language weights: mostly English, as a multilingual user's notes tend to be. */
const LANGUAGE_WEIGHTS = [0.45, 0.1, 0.1, 0.08, 0.07, 0.04, 0.04, 0.05, 0.04, 0.03];

const HASHTAGS = `work personal ideas todo shopping travel recipes reading health finance family
  projects meetings someday inbox music garden kids fitness learning urgent waiting reference
  recette einkaufen viaje проект ταξίδι سفر 旅行 料理 工作 여행`
  .split(/\s+/)
  .filter(Boolean);

/** Appears in about one note in 2,000 (and never in the made-up words): the rare word for search. */
export const RARE_WORD = 'quokka';

const COLORS = ['coral', 'peach', 'sand', 'mint', 'sage', 'fog', 'storm', 'dusk', 'blossom', 'clay'];

export interface CorpusNote {
  id: string;
  title: string;
  content: string;
  color: string;
  pinned: boolean;
  archived: boolean;
  trashed: boolean;
  checklistMode: boolean;
  /** The note gets one small image attachment. */
  withImage: boolean;
}

export const MIN_CONTENT = 50;
export const MAX_CONTENT = 2_000;

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

function pickWeighted(random: () => number, cumulative: readonly number[]): number {
  const r = random();
  let low = 0;
  let high = cumulative.length - 1;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (cumulative[mid]! < r) low = mid + 1;
    else high = mid;
  }
  return low;
}

const LANGUAGE_CUMULATIVE = (() => {
  let total = 0;
  return LANGUAGE_WEIGHTS.map((w) => {
    total += w;
    return total;
  });
})();

const SYLLABLES = 'ka lo mi ne ru sa te vo zu bri cha dre fla glo kri ple sto tra vel wen xo yan zor'.split(
  ' ',
);

/** The long tail of a real vocabulary: made-up words from about 14,000 possible ones. */
function tailWord(random: () => number): string {
  return Array.from({ length: 2 + Math.floor(random() * 2) }, () => pick(random, SYLLABLES)).join('');
}

function word(random: () => number, lang: Language): string {
  const r = random();
  if (r < 0.000005) return RARE_WORD;
  if (r < 0.15) return tailWord(random);
  return lang.words[pickWeighted(random, lang.cumulative)]!;
}

function words(random: () => number, lang: Language, count: number): string {
  return Array.from({ length: count }, () => word(random, lang)).join(lang.separator);
}

function sentence(random: () => number, lang: Language): string {
  const text = words(random, lang, 4 + Math.floor(random() * 12));
  const tag = random() < 0.15 ? ` #${pick(random, HASHTAGS)}` : '';
  return `${text}${lang.separator === '' ? '。' : '.'}${tag}`;
}

/** Text of exactly `length` characters (BMP only, so no surrogate pair is ever split). */
function prose(random: () => number, lang: Language, length: number): string {
  const parts: string[] = [];
  let size = 0;
  while (size < length) {
    const next = random() < 0.12 ? '\n\n' : sentence(random, lang);
    parts.push(next);
    size += next.length + 1;
  }
  return parts.join(' ').slice(0, length).trim().padEnd(MIN_CONTENT, '.');
}

function checklist(random: () => number, lang: Language, length: number): string {
  const lines: string[] = [];
  let size = -1; // n lines are joined by n - 1 newlines
  while (size < length) {
    const line = `- [${random() < 0.3 ? 'x' : ' '}] ${words(random, lang, 1 + Math.floor(random() * 4))}`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n');
}

function uuid(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16));
  hex[12] = '4';
  hex[16] = '89ab'[Math.floor(random() * 4)]!;
  const s = hex.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}

function note(random: () => number): CorpusNote {
  const lang = LANGUAGES[pickWeighted(random, LANGUAGE_CUMULATIVE)]!;
  const checklistMode = random() < 0.2;
  // Skewed towards short notes, as real notes are: most are a few lines, a few are long.
  const length = MIN_CONTENT + Math.floor((MAX_CONTENT - MIN_CONTENT) * random() ** 2);
  let content = checklistMode ? checklist(random, lang, length) : prose(random, lang, length);
  const tags = Array.from({ length: Math.floor(random() * 3) }, () => `#${pick(random, HASHTAGS)}`);
  if (tags.length > 0) content = `${content}\n${tags.join(' ')}`;
  content = content.slice(0, MAX_CONTENT);
  const state = random();
  return {
    id: uuid(random),
    title: random() < 0.1 ? '' : words(random, lang, 1 + Math.floor(random() * 6)),
    content,
    color: random() < 0.7 ? 'default' : pick(random, COLORS),
    pinned: random() < 0.03,
    archived: state >= 0.05 && state < 0.15,
    trashed: state < 0.05,
    checklistMode,
    withImage: random() < 0.05,
  };
}

/** `count` notes from `seed`, generated lazily so that 100,000 notes never sit in memory at once. */
export function* generateCorpus(seed: number, count: number): Generator<CorpusNote> {
  const random = createRandom(seed);
  for (let i = 0; i < count; i++) yield note(random);
}
